import type { WebhookOutcome, WebhookSender } from '../lib/webhook.js';
import type { PushNotification } from './push-sender.js';

/**
 * Sends push notifications through the webhook rules SAMVAD callbacks follow (public https only, checked
 * again after DNS; loopback under --dev-http-peers), one queue per task so its notifications arrive in
 * order. A notification of progress is superseded by the next: `progress` retries it briefly. The final one
 * is owed: `final` retries it with the callback backoff and says how it went, to be recorded.
 */
export class PushDelivery {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly senders: { progress: WebhookSender; final: WebhookSender }) {}

  /** The front door's `deliverPush`. */
  readonly send = (taskId: string, notifications: Promise<PushNotification[]>): Promise<void> =>
    this.queue(taskId, async () => {
      await Promise.all((await notifications).map((n) => this.senders.progress.deliver(request(n))));
    });

  /**
   * The final notification to every config, from `firstAttempt` on (a delivery resumed after a restart).
   * Delivered when every config took it; interrupted when the agent stopped first (still owed).
   */
  final(
    taskId: string,
    notifications: Promise<PushNotification[]>,
    firstAttempt: number,
  ): Promise<WebhookOutcome> {
    return this.queue(taskId, async () => {
      const outcomes = await Promise.all(
        (await notifications).map((n) => this.senders.final.deliver(request(n), firstAttempt)),
      );
      const attempts = Math.max(firstAttempt - 1, ...outcomes.map((o) => o.attempts));
      const some = (outcome: WebhookOutcome['outcome']) => outcomes.some((o) => o.outcome === outcome);
      const outcome = some('interrupted') ? 'interrupted' : some('failed') ? 'failed' : 'delivered';
      return { outcome, attempts };
    });
  }

  close(): void {
    this.senders.progress.close();
    this.senders.final.close();
  }

  private queue<T>(taskId: string, job: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(taskId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(job);
    this.queues.set(taskId, next);
    const forget = () => {
      if (this.queues.get(taskId) === next) this.queues.delete(taskId);
    };
    next.then(forget, forget);
    return next;
  }
}

function request(notification: PushNotification) {
  return {
    taskId: notification.taskId,
    url: notification.url,
    body: Buffer.from(notification.body),
    contentType: notification.contentType,
    headers: () => notification.headers,
  };
}
