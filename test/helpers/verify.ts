import { expect } from 'vitest';
import type { AgentBridgeApp } from '../../src/app.js';
import { digestMatches, parseSignatureHeaders, verifyParsedSignature } from '../../src/protocol/index.js';
import type { Reply } from './envelopes.js';

/** Asserts a reply is signed by `agent` (Form A response headers over @status and the body digest). */
export function expectSignedBy(agent: AgentBridgeApp, reply: Reply): void {
  const digest = reply.headers.get('content-digest') ?? '';
  expect(digestMatches(digest, reply.text), 'content-digest matches the body').toBe(true);
  const parsed = parseSignatureHeaders(
    reply.headers.get('signature-input') ?? '',
    reply.headers.get('signature') ?? '',
  );
  if (typeof parsed === 'string') throw new Error(parsed);
  expect(parsed.components).toEqual(['@status', 'content-digest']);
  const key = agent.keys.verificationKey(parsed.kid);
  expect(key?.active, 'signed with an active key of the agent').toBe(true);
  expect(
    verifyParsedSignature(parsed, { status: reply.status, headers: { 'content-digest': digest } }, key!.key),
  ).toBe(true);
}

/** Asserts the documented error shape: both the top-level code/message and error{}. */
export function expectError(reply: Reply, status: number, code: string, message?: RegExp): void {
  expect({ status: reply.status, code: reply.json.code }, reply.text).toEqual({ status, code });
  expect(reply.json.status).toBe('error');
  expect(reply.json.error).toEqual({ code, message: reply.json.message });
  if (message) expect(reply.json.message).toMatch(message);
}
