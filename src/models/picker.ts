// The model picker of "Start agent run": the endpoint's models (settings and GET /models) and
// VS Code's language models, the last one used first.
import * as vscode from 'vscode';
import type { ModelRef } from '../runner/modelRef';
import type { ModelChoice, ModelProviders } from './providers';

const LAST_USED_KEY = 'agentWaypoints.lastModel';

export async function pickModel(models: ModelProviders, memento: vscode.Memento): Promise<ModelRef | undefined> {
  const choices = await models.choices();
  const last = memento.get<ModelRef>(LAST_USED_KEY);
  const isLast = (c: ModelChoice) => last !== undefined && c.adapter === last.adapter && c.model === last.model;
  const ordered = [...choices.filter(isLast), ...choices.filter((c) => !isLast(c))];
  if (ordered.length <= 1) return ordered[0];
  const items = ordered.map((c) => ({
    label: c.label,
    description: isLast(c) ? 'last used' : '',
    detail: c.detail,
    choice: c,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Model for this run',
    placeHolder: 'The endpoint in settings, or a language model VS Code already has',
    matchOnDetail: true,
  });
  if (!picked) return undefined;
  const ref = { adapter: picked.choice.adapter, model: picked.choice.model };
  await memento.update(LAST_USED_KEY, ref);
  return ref;
}
