// The requests the bench sends: signed envelopes built per call as a real client builds them, and the
// bridge's own gateway call made directly, for the bridge's added latency.
import { randomUUID } from 'node:crypto';
import { A2A_PATHS } from '../src/a2a/agent-card.js';
import type { Mode, Signer } from '../src/protocol/index.js';
import { PATHS, envelope, sign } from '../test/helpers/envelopes.js';
import type { PreparedRequest } from './load.js';

export interface Caller {
  /** The calling agent's id (agent://127.0.0.1:PORT): the receiver fetches its card to verify it. */
  id: string;
  signer: Signer;
}

/**
 * A fresh signed `chat` envelope per call: a unique nonce, the current time, Form A headers signed by the
 * caller's active key over the exact body.
 */
export function signedChat(
  caller: Caller,
  to: string,
  mode: Mode = 'sync',
  message = 'hi',
): () => PreparedRequest {
  return () => {
    const signed = sign(envelope(caller.id, to, mode, { message }), caller.signer);
    return { path: PATHS[mode], headers: signed.headers, body: signed.body };
  };
}

/** The gateway call the bridge makes for a sync chat (same headers and body shape), sent directly. */
export function directGatewayChat(token: string, message = 'hi'): () => PreparedRequest {
  const body = JSON.stringify({
    model: 'openclaw',
    messages: [{ role: 'user', content: message }],
    user: 'agent://127.0.0.1:1#samvad',
  });
  const headers = {
    authorization: `Bearer ${token}`,
    'x-openclaw-scopes': 'operator.write',
    'x-gateway-scopes': 'operator.write',
    'content-type': 'application/json',
    accept: 'application/json',
    'x-openclaw-message-channel': 'samvad',
  };
  return () => ({ path: '/v1/chat/completions', headers, body });
}

const A2A_JSONRPC_PATH = A2A_PATHS.jsonRpc;

/**
 * An A2A v1.0 JSON-RPC message as the SDK's client sends it (a fresh messageId per call), with the caller's
 * A2A key: `SendMessage` (blocking: the reply comes back in the completed task) or `SendStreamingMessage`.
 */
export function a2aMessage(
  key: string,
  method: 'SendMessage' | 'SendStreamingMessage' = 'SendMessage',
  message = 'hi',
): () => PreparedRequest {
  const headers = {
    authorization: `Bearer ${key}`,
    'a2a-version': '1.0',
    'content-type': 'application/json',
    accept: method === 'SendMessage' ? 'application/json' : 'text/event-stream',
  };
  let id = 0;
  return () => ({
    path: A2A_JSONRPC_PATH,
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++id,
      method,
      params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: message }] } },
    }),
  });
}
