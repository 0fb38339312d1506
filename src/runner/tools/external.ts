// Tools from outside the extension — MCP servers' and VS Code's (`vscode.lm.tools`) — behind one
// seam: a ToolProvider lists them (starting servers lazily), the registry offers them beside its
// own. Their JSON Schemas go to the model as the source wrote them and validate the arguments —
// bounded and with linear-time patterns (schemaGuard.ts), since the source is not trusted; their
// input hash binds the source's identity, so an approval never reaches another server.
import { Ajv, type ValidateFunction } from 'ajv';
import { z } from 'zod';
import type { Effect, SeenTool, ToolCall } from '../../store/api/schema';
import { canonicalJson, inputHash, sha256 } from '../hash';
import { linearRegExp, schemaTooBig, withPatternBudget } from './schemaGuard';
import type { Tool } from './types';

/** Lists tools from outside; the registry asks before each model call and on resume. */
export interface ToolProvider {
  readonly id: string;
  /** Its tools now. May start servers; never throws (a failure shows in the provider's own state). */
  tools(signal?: AbortSignal): Promise<readonly Tool[]>;
}

/** The hash a call is known by: tool name + arguments, and for an external tool its source's identity. */
export function toolInputHash(tool: Pick<Tool, 'name' | 'external'>, args: unknown): string {
  const ext = tool.external;
  if (!ext) return inputHash(tool.name, args);
  return sha256(`${tool.name}\n${ext.kind}:${ext.source}:${ext.remoteName}\n${ext.identity}\n${canonicalJson(args)}`);
}

export function schemaHash(parameters: Record<string, unknown>, description: string): string {
  return sha256(canonicalJson({ parameters, description }));
}

export function seenTool(tool: Tool): SeenTool | null {
  const ext = tool.external;
  if (!ext) return null;
  return {
    name: tool.name,
    kind: ext.kind,
    source: ext.source,
    tool: ext.remoteName,
    identity: ext.identity.slice(0, 16),
    schema_hash: schemaHash(ext.parameters, tool.description).slice(0, 16),
  };
}

/**
 * A call to an external tool that vanished or changed since the model was offered it: the message
 * the model (and, in the tool card, the user) gets instead of the call being made blind. null: the
 * tool is as it was, or the model was not offered it as an external tool.
 */
export function toolDrift(
  call: ToolCall,
  tool: Tool | null,
  seen: readonly SeenTool[] | undefined,
  effect: Effect | undefined,
): string | null {
  const was = seen?.find((s) => s.name === call.function.name);
  if (!was) return null;
  const now = tool ? seenTool(tool) : null;
  const where = was.kind === 'mcp' ? `MCP server "${was.source}"` : "VS Code's tools";
  const maybeRan =
    effect && !effect.result
      ? ' It was running or about to run at the interruption and its result was never recorded, so it may already have run.'
      : '';
  let what: string | null = null;
  if (!now) what = `is no longer offered by ${where}`;
  else if (now.identity !== was.identity)
    what = `belongs to a different server now: ${where} was changed (its command, arguments, environment names or URL)`;
  else if (now.schema_hash !== was.schema_hash)
    what = `changed since it was offered: ${where} now describes it differently (arguments or description)`;
  if (!what) return null;
  const schema = tool?.external ? ` Its arguments now: ${JSON.stringify(tool.external.parameters)}.` : '';
  return `Not run: the tool ${call.function.name} ${what}.${maybeRan}${schema} Call it again if it still fits.`;
}

// `addUsedSchema: false`: a server's `$id` is never registered globally (two servers, or one listed
// twice, may use the same id). `code.regExp`: the server's patterns never run on a backtracking engine.
const ajv = new Ajv({
  strict: false,
  allErrors: true,
  validateFormats: false,
  addUsedSchema: false,
  code: { regExp: linearRegExp },
});
/** Compiled once per distinct schema: tools are listed again before every model call. */
const validators = new Map<string, ValidateFunction>();

function validatorFor(parameters: Record<string, unknown>): ValidateFunction {
  const tooBig = schemaTooBig(parameters);
  if (tooBig) throw new Error(tooBig);
  const key = canonicalJson(parameters);
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile(parameters);
    if (validators.size >= 2000) validators.clear();
    validators.set(key, v);
  }
  return v;
}

/**
 * A zod schema that validates with the tool's JSON Schema (ajv), so the registry checks external
 * tools' arguments like its own. Throws when the JSON Schema itself does not compile.
 */
export function jsonSchemaArgs(parameters: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  const validate = validatorFor(parameters);
  return z.custom<Record<string, unknown>>().superRefine((value, ctx) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'expected an object of arguments' });
      return;
    }
    if (withPatternBudget(() => validate(value))) return;
    for (const e of validate.errors ?? []) {
      const path = e.instancePath.split('/').filter(Boolean);
      ctx.addIssue({ code: 'custom', message: e.message ?? 'invalid', path });
    }
  });
}

/** The parameters as the model gets them: an object schema, `$schema` left out. */
export function modelParameters(inputSchema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = inputSchema;
  return { ...rest, type: 'object' };
}

/** `server__tool` within OpenAI's `^[a-zA-Z0-9_-]{1,64}$`; a long name keeps a hash of the whole. */
export function externalToolName(source: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, '_');
  const full = `${clean(source)}__${clean(tool)}`;
  if (full.length <= 64) return full;
  return `${full.slice(0, 55)}_${sha256(`${source}\n${tool}`).slice(0, 8)}`;
}

/** Makes names unique (a clash gets `_2`, `_3`…), in a stable order so a name means the same tool each time. */
export function uniqueNames(tools: Tool[], taken: ReadonlySet<string>): Tool[] {
  const used = new Set(taken);
  const sorted = [...tools].sort((a, b) => key(a).localeCompare(key(b)));
  return sorted.map((t) => {
    let name = t.name;
    for (let i = 2; used.has(name); i++) name = `${t.name.slice(0, 60)}_${i}`;
    used.add(name);
    return name === t.name ? t : { ...t, name };
  });
}

const key = (t: Tool) => `${t.external?.source ?? ''}\n${t.external?.remoteName ?? t.name}`;
