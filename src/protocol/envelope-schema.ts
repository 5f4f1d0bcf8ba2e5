import { chainSchema } from './call-chain.js';

/**
 * `agent://` and a host: DNS labels or a bracketed IPv6 literal, an optional port. Nothing else, so a sender
 * id can never carry spaces, control characters or escape sequences into a log line or a terminal.
 */
export const AGENT_ID_PATTERN =
  '^agent://(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\\[[0-9A-Fa-f:.]{2,45}\\])(?::[0-9]{1,5})?$';

/** The project's own JSON Schema for a request envelope (PROTOCOL.md §2); checked against the reference in tests. */
export const envelopeSchema = {
  $id: 'agent-bridge/envelope',
  type: 'object',
  required: ['from', 'to', 'skill', 'mode', 'nonce', 'timestamp', 'traceId', 'spanId', 'payload'],
  properties: {
    from: { type: 'string', pattern: AGENT_ID_PATTERN, maxLength: 300 },
    to: { type: 'string', pattern: AGENT_ID_PATTERN, maxLength: 300 },
    // Skill ids are printable (they are echoed in refusals and logs).
    skill: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[\\x21-\\x7e]+$' },
    mode: { enum: ['sync', 'async', 'stream'] },
    nonce: { type: 'string', minLength: 8, maxLength: 64 },
    timestamp: { type: 'string', format: 'date-time', maxLength: 64 },
    traceId: { type: 'string', minLength: 1, maxLength: 256 },
    spanId: { type: 'string', minLength: 1, maxLength: 256 },
    parentSpanId: { type: ['string', 'null'], maxLength: 256 },
    delegationToken: { type: ['string', 'null'], maxLength: 8192 },
    // The published schema allows null for both: "omit or null" for public skills.
    auth: {
      type: ['object', 'null'],
      required: ['scheme'],
      properties: {
        scheme: { enum: ['bearer', 'none'] },
        token: { type: 'string', maxLength: 4096 },
      },
    },
    callbackUrl: { type: ['string', 'null'], format: 'uri', maxLength: 2048 },
    payload: { type: 'object' },
    // This bridge's extension (call-chain.ts): a malformed chain is refused; other fields are read past.
    'x-agent-bridge-chain': chainSchema,
    kid: { type: 'string', minLength: 1, maxLength: 256 },
    signature: { type: 'string', minLength: 1, maxLength: 256 },
  },
} as const;
