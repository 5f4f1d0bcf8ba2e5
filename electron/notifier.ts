import { Notification } from 'electron';
import { NotificationLimiter, noticesFor, summaryFor, type Notice } from './decisions/notification-policy.js';
import type { ShellState } from './decisions/shell-state.js';
import type { ConsolePage } from './decisions/window-options.js';

/** Desktop notifications for state changes, through the rate limiter; a click opens the notice's page. */
export class Notifier {
  private readonly limiter = new NotificationLimiter();
  private previous: ShellState | undefined;
  /** Wakes up when a held-back notice (several new senders) may be summed up. */
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly onClick: (page?: ConsolePage) => void) {}

  observe(state: ShellState): void {
    const before = this.previous;
    this.previous = state;
    if (!before || !Notification.isSupported()) return;
    this.show(this.limiter.admit(noticesFor(before, state), Date.now()));
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.stop();
    const at = this.limiter.nextReleaseAt();
    if (at === undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        const state = this.previous;
        if (state) this.show(this.limiter.release(Date.now(), (kind) => summaryFor(kind, state)));
        this.schedule();
      },
      Math.max(0, at - Date.now()),
    );
    this.timer.unref();
  }

  private show(notices: Notice[]): void {
    for (const notice of notices) {
      const notification = new Notification({ title: notice.title, body: notice.body });
      notification.on('click', () => this.onClick(notice.page));
      notification.show();
    }
  }
}
