import { Notification } from 'electron';
import { NotificationLimiter, noticesFor } from './decisions/notification-policy.js';
import type { ShellState } from './decisions/shell-state.js';

/** Desktop notifications for state changes, through the rate limiter. */
export class Notifier {
  private readonly limiter = new NotificationLimiter();
  private previous: ShellState | undefined;

  constructor(private readonly onClick: () => void) {}

  observe(state: ShellState): void {
    const before = this.previous;
    this.previous = state;
    if (!before || !Notification.isSupported()) return;
    for (const notice of this.limiter.admit(noticesFor(before, state), Date.now())) {
      const notification = new Notification({ title: notice.title, body: notice.body });
      notification.on('click', this.onClick);
      notification.show();
    }
  }
}
