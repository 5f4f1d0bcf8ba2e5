import type { Router } from '@koa/router';
import { CredentialError } from '../mcp/a2a-credentials.js';
import type { OutboundCredentialsResponse } from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { readJson } from './body.js';
import { ConsoleError } from './errors.js';
import { reply } from './reply.js';

/**
 * Credentials the operator keeps for A2A agents their own agent calls (mcp/a2a-credentials.ts): GET lists
 * them without their values, POST keeps one (`{url, scheme, header?, value}`), POST .../remove forgets one
 * (`{url}`). No answer, error or log line ever holds a value.
 */
export function credentialRoutes(router: Router, { credentials }: ApiDeps): void {
  router.get(
    '/api/outbound/credentials',
    reply((): OutboundCredentialsResponse => credentials.view()),
  );
  router.post(
    '/api/outbound/credentials',
    reply(async (ctx) => {
      const body = await readJson(ctx);
      return change(() => credentials.set(body));
    }),
  );
  router.post(
    '/api/outbound/credentials/remove',
    reply(async (ctx) => {
      const body = (await readJson(ctx)) as { url?: unknown } | null;
      return change(() => credentials.remove(body?.url));
    }),
  );
}

/** A refusal of the store (which field, why) as the console's 4xx with a field error. */
function change(action: () => OutboundCredentialsResponse): OutboundCredentialsResponse {
  try {
    return action();
  } catch (error) {
    if (!(error instanceof CredentialError)) throw error;
    throw new ConsoleError(error.status, error.message, undefined, [
      { field: error.field, message: error.message },
    ]);
  }
}
