// Our conversation (OpenAI Chat Completions shapes) to VS Code's LanguageModelChatMessage and back.
// vscode.lm has no system role: the system prompt goes first as a user message. Tool calls travel
// as LanguageModelToolCallPart in an assistant message, their results as LanguageModelToolResultPart
// in the user message that follows (consecutive results share one message). The model's reasoning
// is never sent back.
import * as vscode from 'vscode';
import type { ChatMessage, ToolCall } from '../store/api/schema';
import type { ToolDefinition } from '../runner/provider';

export function toLmMessages(messages: readonly ChatMessage[]): vscode.LanguageModelChatMessage[] {
  const out: vscode.LanguageModelChatMessage[] = [];
  let results: vscode.LanguageModelToolResultPart[] = [];
  const flushResults = () => {
    if (results.length > 0) out.push(vscode.LanguageModelChatMessage.User(results));
    results = [];
  };
  for (const m of messages) {
    if (m.role === 'tool') {
      results.push(
        new vscode.LanguageModelToolResultPart(m.tool_call_id, [new vscode.LanguageModelTextPart(m.content)]),
      );
      continue;
    }
    flushResults();
    if (m.role === 'assistant') {
      const parts: (vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart)[] = [];
      if (m.content) parts.push(new vscode.LanguageModelTextPart(m.content));
      for (const c of m.tool_calls ?? [])
        parts.push(new vscode.LanguageModelToolCallPart(c.id, c.function.name, argumentsObject(c)));
      out.push(vscode.LanguageModelChatMessage.Assistant(parts.length > 0 ? parts : ''));
    } else {
      out.push(vscode.LanguageModelChatMessage.User(m.content));
    }
  }
  flushResults();
  return out;
}

/** A call's arguments as the object vscode.lm wants; arguments that are not a JSON object go as `{}` (the tool already answered them with an error). */
function argumentsObject(c: ToolCall): object {
  try {
    const v: unknown = JSON.parse(c.function.arguments || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

export function toLmTools(tools: readonly ToolDefinition[] | undefined): vscode.LanguageModelChatTool[] {
  return (tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description ?? '',
    inputSchema: t.function.parameters ?? { type: 'object' },
  }));
}

/** One streamed part of a response, classified. Reasoning comes as LanguageModelThinkingPart where the host sends it (a proposed API in 1.95–1.140). */
export type LmPart =
  | { kind: 'text'; text: string }
  | { kind: 'call'; id: string; name: string; args: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'other' };

export function classifyPart(part: unknown): LmPart {
  if (part instanceof vscode.LanguageModelTextPart) return { kind: 'text', text: part.value };
  if (part instanceof vscode.LanguageModelToolCallPart)
    return { kind: 'call', id: part.callId, name: part.name, args: JSON.stringify(part.input ?? {}) };
  const p = part as { constructor?: { name?: string }; value?: unknown };
  if (p?.constructor?.name === 'LanguageModelThinkingPart') {
    const v = p.value;
    return { kind: 'reasoning', text: typeof v === 'string' ? v : Array.isArray(v) ? v.join('') : '' };
  }
  return { kind: 'other' };
}
