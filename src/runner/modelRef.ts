// Which provider a run talks to: an adapter and a model. Checkpoints record both
// (`provider_adapter`, `requested_model`), so a resumed run uses the same provider; a run's summary
// names its model as `adapter/model` for adapters other than the endpoint, so even a run that
// died before its first checkpoint restarts with the provider it was started with.
import { PROVIDER_ADAPTER } from './provider/types';

export interface ModelRef {
  adapter: string;
  model: string;
}

/** Adapters whose runs are labelled `adapter/model` (the endpoint's runs keep the plain model name). */
const PREFIXED_ADAPTERS = ['vscode-lm'];

export function modelLabel(ref: ModelRef): string {
  return PREFIXED_ADAPTERS.includes(ref.adapter) ? `${ref.adapter}/${ref.model}` : ref.model;
}

export function parseModelLabel(label: string): ModelRef {
  const prefix = PREFIXED_ADAPTERS.find((a) => label.startsWith(`${a}/`));
  return prefix
    ? { adapter: prefix, model: label.slice(prefix.length + 1) }
    : { adapter: PROVIDER_ADAPTER, model: label };
}
