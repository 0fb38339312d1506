// The provider's public surface (see README.md for per-server settings).
export { createProvider, PLACEHOLDER_API_KEY } from './client';
export { ProviderError, type ProviderErrorKind } from './errors';
export { costUsd, DEFAULT_PRICES, normalizeModel, priceFor, type ModelPrice, type PriceTable } from './pricing';
export { normalizeFinishReason } from './assemble';
export {
  PROVIDER_ADAPTER,
  type ChatProvider,
  type CompletionRequest,
  type ProviderConfig,
  type ProviderResult,
  type ToolDefinition,
} from './types';
