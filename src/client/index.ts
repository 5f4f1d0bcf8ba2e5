/** A small client for calling SAMVAD 1.2 agents: signed requests, verified replies and streams. */
export {
  AgentClient,
  REPLY_MAX_BYTES,
  type AgentClientOptions,
  type CallOptions,
  type CallResult,
  type StreamEvent,
  type WaitOptions,
} from './agent-client.js';
export { baseUrlFor, type BaseUrlOptions } from './base-url.js';
export {
  DELEGATION_DEFAULT_LIFETIME_SECONDS,
  DELEGATION_MAX_LIFETIME_SECONDS,
  createDelegationToken,
  type DelegationClaimsInput,
} from './delegation.js';
export {
  CARD_CACHE_MAX_ENTRIES,
  CARD_MAX_BYTES,
  CARD_MAX_TTL_S,
  CARD_MIN_TTL_S,
  CARD_TIMEOUT_MS,
  CardCache,
  fetchCardFrom,
  type CardCacheOptions,
  type BeforeRequest,
  type CardFetchOptions,
} from './card-fetch.js';
export {
  buildEnvelope,
  signEnvelope,
  type EnvelopeInput,
  type SignatureForm,
  type SignedRequest,
} from './envelope.js';
export {
  AgentCallError,
  CardFetchError,
  ClientError,
  ResponseVerificationError,
  errorCodeOf,
} from './errors.js';
export { SSE_MAX_BLOCK_CHARS, SseParser, readSse, type SseBlock } from './sse-reader.js';
export { verifyEvent, verifyResponse, type KeyLookup, type SignatureCheck } from './verify.js';
