import type { Router } from '@koa/router';
import type { AgentBridgeApp } from '../app.js';
import type { AccessApproveRequest, AccessChangeResponse, AccessResponse } from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { readJson } from './body.js';
import { ConsoleError } from './errors.js';
import { reply } from './reply.js';

/**
 * GET /api/access and POST /api/access/{approve,deny,revoke} with `{"sender": "agent://..."}` (approve: and
 * `"skills": [...]` to open exactly those skills; again, to change them). A request
 * the access lists refuse (AccessError: its status, message and fix) is answered by error-reply.ts.
 */
export function accessRoutes(router: Router, { app }: ApiDeps): void {
  const change = (action: (sender: string, body: unknown) => number) =>
    reply(async (ctx): Promise<AccessChangeResponse> => {
      const body = await readJson(ctx);
      const tasks = action(senderOf(body), body);
      return { ...app.access.view(), tasks };
    });

  router.get(
    '/api/access',
    reply((): AccessResponse => app.access.view()),
  );
  router.post(
    '/api/access/approve',
    change((sender, body) => app.access.approve(sender, (body as AccessApproveRequest).skills)),
  );
  router.post(
    '/api/access/deny',
    change((sender) => app.access.deny(sender)),
  );
  router.post(
    '/api/access/revoke',
    change((sender) => revoke(app, sender)),
  );
}

/** An approved sender has no held tasks, so revoking starts or fails none. */
function revoke(app: AgentBridgeApp, sender: string): number {
  app.access.revoke(sender);
  return 0;
}

function senderOf(body: unknown): string {
  const sender = (body as { sender?: unknown } | null)?.sender;
  if (typeof sender !== 'string') {
    throw new ConsoleError(400, 'The body must name the sender.', 'Send {"sender": "agent://..."}.');
  }
  return sender;
}
