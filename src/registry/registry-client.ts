import { AGENT_ID_PATTERN } from '../protocol/index.js';
import { escapedLine, oneLine } from '../lib/text.js';
import { BodyTooLargeError, appFetch, readCapped, type Response } from '../lib/http.js';

/** A registration record is a few hundred bytes: anything past this is not one, and is not buffered. */
export const REGISTRY_REPLY_MAX_BYTES = 64 * 1024;

export interface RegistryRecord {
  id: string;
  name: string;
  registeredAt: string;
}

/** A registration that did not happen; `message` says what happened and `fix` what to do. */
export class RegistryError extends Error {
  constructor(
    message: string,
    readonly fix: string,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

/** `POST {registry}/api/register` with `{url}` (PROTOCOL.md §8); the registry fetches our card from `url`. */
export async function registerWithRegistry(
  registryUrl: string,
  publicUrl: string,
  timeoutMs = 20_000,
): Promise<RegistryRecord> {
  const endpoint = `${registryUrl.replace(/\/+$/, '')}/api/register`;
  let response;
  try {
    response = await appFetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ url: publicUrl }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new RegistryError(
      timedOut
        ? `The registry at ${registryUrl} did not answer within ${timeoutMs / 1000} s.`
        : `The registry at ${registryUrl} is unreachable (${cause?.code ?? cause?.message ?? (error as Error).message}).`,
      'Check your internet connection and the registry URL setting, then register again.',
    );
  }
  const text = await readReply(response, registryUrl, timeoutMs);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    // The registry's own words, quoted: one line, capped and escaped.
    const said = escapedLine(messageOf(body) ?? (text.trim() || 'no message'), 300);
    const fix =
      response.status >= 500
        ? 'The registry is having trouble; try again in a few minutes.'
        : /card|fetch|reach/i.test(said)
          ? 'The registry could not read your card at the public URL: check the tunnel is online and run the self-test.'
          : 'Read the registry message above; fix what it names and register again.';
    throw new RegistryError(
      `The registry refused the registration (HTTP ${response.status}): ${said}`,
      fix,
      response.status,
    );
  }
  const record = toRecord(body);
  if (!record) {
    throw new RegistryError(
      `The registry at ${registryUrl} answered, but not with a registration record ({id, name, registeredAt}).`,
      'Check the registry URL setting: it must point at a SAMVAD registry.',
      response.status,
    );
  }
  return record;
}

/** The reply's text, at most REGISTRY_REPLY_MAX_BYTES: a URL that streams without end cannot fill memory. */
async function readReply(response: Response, registryUrl: string, timeoutMs: number): Promise<string> {
  try {
    return Buffer.from(await readCapped(response, REGISTRY_REPLY_MAX_BYTES)).toString('utf8');
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new RegistryError(
        `The registry at ${registryUrl} sent a reply larger than ${REGISTRY_REPLY_MAX_BYTES / 1024} KiB, which is not a registration record (those are a few hundred bytes): reading stopped there.`,
        'Check the registry URL setting: it must point at a SAMVAD registry (e.g. https://samvad.dev), then register again.',
        response.status,
      );
    }
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new RegistryError(
      timedOut
        ? `The registry at ${registryUrl} did not finish its reply within ${timeoutMs / 1000} s.`
        : `The registry at ${registryUrl} broke off its reply (${(error as Error).message}).`,
      'Check your internet connection and the registry URL setting, then register again.',
      response.status,
    );
  }
}

/**
 * The record, each field checked against its shape and written anew (it is kept, shown and printed): an
 * agent id, a name on one short line, a time. Undefined when it is not a record.
 */
function toRecord(value: unknown): RegistryRecord | undefined {
  const v = value as Partial<Record<keyof RegistryRecord, unknown>> | undefined;
  if (typeof v?.id !== 'string' || !AGENT_ID.test(v.id) || typeof v.registeredAt !== 'string')
    return undefined;
  const registeredAt = Date.parse(v.registeredAt);
  if (!Number.isFinite(registeredAt) || typeof v.name !== 'string') return undefined;
  return { id: v.id, name: oneLine(v.name, 100) ?? '', registeredAt: new Date(registeredAt).toISOString() };
}

const AGENT_ID = new RegExp(AGENT_ID_PATTERN);

function messageOf(body: unknown): string | undefined {
  const b = body as { error?: unknown; message?: unknown } | undefined;
  if (typeof b?.error === 'string') return b.error;
  if (typeof (b?.error as { message?: unknown } | undefined)?.message === 'string')
    return (b?.error as { message: string }).message;
  if (typeof b?.message === 'string') return b.message;
  return undefined;
}
