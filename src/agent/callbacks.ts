import { signRequest, type Signer } from '../protocol/index.js';
import { WebhookSender, WebhookUrlError, type WebhookOptions, type WebhookOutcome } from '../lib/webhook.js';

export interface CallbackOptions extends Omit<WebhookOptions, 'name'> {
  signer: () => Signer;
}

/** A callbackUrl the address rules refuse (its message says why, naming `callbackUrl`). */
export { WebhookUrlError as CallbackUrlError };

/** Signed delivery of finished tasks to the caller's callbackUrl (PROTOCOL.md §6), by the webhook rules. */
export class CallbackSender {
  private readonly webhook: WebhookSender;

  constructor(private readonly options: CallbackOptions) {
    this.webhook = new WebhookSender({ ...options, name: 'callbackUrl' });
  }

  /** The checks that need no DNS, made when the task is submitted so the caller hears at once. */
  check(rawUrl: string): URL {
    return this.webhook.check(rawUrl);
  }

  /**
   * Delivers `body` with retries and backoff; resolves with the outcome and the attempts made, never
   * rejects. `interrupted` means the agent stopped while a retry was due: the delivery is still owed.
   */
  deliver(taskId: string, rawUrl: string, body: unknown, firstAttempt = 1): Promise<WebhookOutcome> {
    const payload = Buffer.from(JSON.stringify(body));
    return this.webhook.deliver(
      {
        taskId,
        url: rawUrl,
        body: payload,
        contentType: 'application/json',
        headers: (url) => {
          const path = `${url.pathname}${url.search}`;
          const signature = signRequest(this.options.signer(), { method: 'POST', path, body: payload });
          return {
            'Content-Digest': signature['content-digest'],
            'Signature-Input': signature['signature-input'],
            Signature: signature.signature,
          };
        },
      },
      firstAttempt,
    );
  }

  close(): void {
    this.webhook.close();
  }
}
