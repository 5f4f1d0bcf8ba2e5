/** Who may reach the gateway, at a glance: the standing warning of policy `open`, and who waits for approval. */
import type { StatusResponse } from '../api/contract';
import { useNow } from '../hooks/useNow';
import { formatDateTime, formatRelative } from '../lib/format';
import { pageHref } from '../pages/types';
import { Notice } from './States';

interface OpenAccessWarningProps {
  /** The gateway agent callers reach, when known. */
  agent?: string;
  /** Offer a link to the Access page (not on the Access page itself). */
  link?: boolean;
}

/** Policy `open`: shown as long as it is so, on every page that speaks of access. */
export function OpenAccessWarning({ agent, link = false }: OpenAccessWarningProps) {
  return (
    <Notice
      tone="error"
      title="Access is open: anyone who can sign an envelope reaches your gateway agent"
      testId="open-warning"
    >
      <p className="notice-message">
        No approval is asked: every caller with a valid signature is forwarded to{' '}
        {agent ? (
          <>
            the agent <code>{agent}</code>
          </>
        ) : (
          'your gateway'
        )}
        , within the rate limits only. Keep that agent restricted, or switch the policy to pairing so you
        approve each new sender once.
      </p>
      {link ? (
        <div className="actions">
          <a className="button small" href={pageHref('access')}>
            Change the access policy
          </a>
        </div>
      ) : null}
    </Notice>
  );
}

/** "2 senders wait for your approval", with the newest, linking to the Access page. */
export function PendingNotice({ access }: { access: StatusResponse['access'] }) {
  const now = useNow(30_000);
  if (access.pending <= 0) return null;
  const newest = access.newest;
  const title =
    access.pending === 1
      ? '1 sender waits for your approval'
      : `${access.pending} senders wait for your approval`;
  return (
    <Notice tone="warning" title={title} testId="pending-notice">
      {newest ? (
        <p className="notice-message">
          Newest: {newest.name ? <>“{newest.name}” (self-declared name), </> : null}
          <code>{newest.sender}</code>, request <code>{newest.code}</code>, asked{' '}
          <time dateTime={newest.firstAt} title={formatDateTime(newest.firstAt)}>
            {formatRelative(newest.firstAt, now, 'past')}
          </time>
          .
        </p>
      ) : null}
      <div className="actions">
        <a className="button small" href={pageHref('access')}>
          Review on the Access page
        </a>
      </div>
    </Notice>
  );
}
