import type { ApiClient } from '../api/client';
import type { StatusResponse } from '../api/contract';
import { useAction } from '../hooks/useAction';
import { formatDateTime } from '../lib/format';
import { pageHref } from '../pages/types';
import { HelpLink } from './HelpLink';
import { ErrorNotice, Notice } from './States';

interface AddressChangeBannerProps {
  api: ApiClient;
  tunnel: StatusResponse['tunnel'];
  registry: StatusResponse['registry'];
  onDismissed: () => Promise<void>;
}

/** The agent's id is its public address: `agent://<host>`. */
function idOf(url: string): string {
  try {
    return `agent://${new URL(url).host}`;
  } catch {
    return url;
  }
}

/**
 * The public address changed (at a restart, or while running), and with it the agent's id: what that breaks,
 * what follows by itself, and how to keep one address. Shown until the operator dismisses it.
 */
export function AddressChangeBanner({ api, tunnel, registry, onDismissed }: AddressChangeBannerProps) {
  const dismiss = useAction(async () => {
    await api.dismissAddressChange();
    await onDismissed();
  });
  const change = tunnel.addressChange;
  if (!change) return null;
  const [was, now] = [idOf(change.previous), idOf(change.url)];
  // Several changes since the operator last dismissed one: the id they knew broke first, so it is named too.
  const changes = change.changes ?? 1;
  const known = changes > 1 && change.known ? idOf(change.known) : undefined;
  return (
    <Notice tone="warning" title="Your agent's address changed, and with it its id" testId="address-change">
      <p className="notice-message">
        <code>{was}</code> is now <code>{now}</code> (since {formatDateTime(change.at)}).
        {change.note ? <> Why: {change.note}.</> : null}
      </p>
      {known ? (
        <p className="notice-message" data-testid="address-change-count">
          It changed {changes} times since you last dismissed this notice; before these changes it was{' '}
          <code>{known}</code>.
        </p>
      ) : null}
      <p className="notice-message" data-testid="address-change-breaks">
        <strong>What breaks:</strong> agents that approved <code>{was}</code>
        {known ? (
          <>
            {' '}
            or <code>{known}</code>
          </>
        ) : null}{' '}
        do not know <code>{now}</code>: they must approve it again, so tell them the new id. Links to the old
        address stop working.
      </p>
      <p className="notice-message" data-testid="address-change-registry">
        {registry.status === 'unregistered'
          ? 'You are not registered: nothing to update in the registry.'
          : 'Your registry entry follows by itself: the new address is registered (the Registry card shows it).'}
      </p>
      <p className="notice-message">
        To keep one address from now on, use a stable tunnel: Tailscale Funnel, a Cloudflare named tunnel or
        ngrok with a reserved domain, in Settings → Tunnel.
      </p>
      <div className="actions">
        <a className="button small" href={pageHref('settings')}>
          Choose a stable address
        </a>
        <button
          type="button"
          className="button small"
          onClick={() => void dismiss.run()}
          disabled={dismiss.busy}
        >
          {dismiss.busy ? 'Dismissing…' : 'Dismiss'}
        </button>
        <HelpLink
          to="docs/tunnels.md#the-address-is-the-agents-id"
          topic="why the address is the agent's id"
        />
      </div>
      {dismiss.error ? <ErrorNotice error={dismiss.error} title="Not dismissed" /> : null}
    </Notice>
  );
}
