/**
 * A2A keys, on the Access page: the keys agents on the A2A network call this one with (name, created, last
 * used, calls, expiry, limits, the skills it may call), issuing one (shown once) and revoking one (after a confirmation). A revoked
 * or expired key that Traffic shows refused says when it was last tried: its holder still uses it. Reloads
 * when the core says the access lists changed (`version`: a key issued or revoked elsewhere, another replica
 * or the CLI), and every 30 s for the usage.
 */
import { useCallback, useMemo, useRef, useState } from 'react';
import type { ApiClient } from '../api/client';
import type { A2AKeyIssueRequest, A2AKeyView, AccessPolicy, SkillView, TrafficEntry } from '../api/contract';
import { asApiError, useAction } from '../hooks/useAction';
import { useLoaded } from '../hooks/useLoaded';
import { useNow } from '../hooks/useNow';
import { formatCount, formatRelative } from '../lib/format';
import { scopeText } from '../lib/skills';
import { Badge } from './Badge';
import { Card } from './Card';
import { ConfirmDialog } from './ConfirmDialog';
import { IssuedKey } from './IssuedKey';
import { IssueKeyForm } from './IssueKeyForm';
import { EmptyState, ErrorNotice, Loading, Notice } from './States';
import { When } from './When';
import './a2a-keys.css';

interface A2AKeysCardProps {
  api: ApiClient;
  /** Bumped whenever the access lists (and the keys) changed. */
  version: number;
  policy: AccessPolicy;
  /** The traffic log the console holds (newest first): where refused keys were last tried. */
  traffic?: readonly TrafficEntry[];
  /** The skills a new key may be scoped to (undefined while they load or cannot be read). */
  skills?: readonly SkillView[];
}

export function A2AKeysCard({ api, version, policy, traffic, skills }: A2AKeysCardProps) {
  const [issued, setIssued] = useState<{ name: string; secret: string } | null>(null);
  const [confirming, setConfirming] = useState<A2AKeyView | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const now = useNow(30_000);

  // Only the newest answer is shown: a slow load must not undo an issue or a revocation made meanwhile.
  const { view, loadError, show, load } = useLoaded(
    useCallback(() => api.a2aKeys(), [api]),
    [version, now],
  );

  const request = useRef<A2AKeyIssueRequest | null>(null);
  const issue = useAction(async () => {
    if (!request.current) return undefined;
    const response = await api.issueA2AKey(request.current);
    show(response);
    setIssued({ name: response.key.name, secret: response.secret });
    return response.key;
  });

  const revoke = useAction(async () => {
    if (!confirming) return undefined;
    try {
      const response = await api.revokeA2AKey(confirming.id);
      show(response);
      return response.key;
    } catch (error) {
      // Gone meanwhile (dropped long after its revocation, or another window): show what is.
      if (asApiError(error).status === 404) void load();
      throw error;
    }
  });

  const active = view?.keys.filter((key) => key.status === 'active').length ?? 0;
  const refused = useMemo(() => lastRefused(traffic ?? []), [traffic]);
  return (
    <Card
      title="A2A keys"
      testId="a2a-keys"
      help={{ to: 'docs/a2a.md#give-an-a2a-agent-a-key', topic: 'A2A keys' }}
      aside={<Badge tone={active > 0 ? 'info' : 'neutral'}>{`${active} in use`}</Badge>}
    >
      <p className="muted small">
        Agents on the A2A network call yours with a key you issue here, sent as{' '}
        <code>Authorization: Bearer abk_…</code>. Each key is its own caller, with its own rate limits, daily
        token budget and conversations; its calls show in Traffic. (Also from a shell:{' '}
        <code>agent-bridge keys</code>.)
      </p>
      <p className="muted small" data-testid="a2a-keyless">
        {policy === 'open'
          ? 'The policy is open: A2A callers without a key get in too, each as its own address, with the per-address limits.'
          : 'A2A callers without a key are refused, and told to ask you for one.'}
      </p>
      {loadError ? <ErrorNotice error={loadError} title="Cannot load the A2A keys" /> : null}
      {outcome ? <Notice tone="success" message={outcome} testId="a2a-key-result" /> : null}
      {issued ? <IssuedKey name={issued.name} secret={issued.secret} onDone={() => setIssued(null)} /> : null}
      {!view ? (
        loadError ? null : (
          <Loading label="Loading the A2A keys…" />
        )
      ) : view.keys.length === 0 ? (
        <EmptyState title="No A2A keys yet">
          <p>Issue one below for each agent you let call yours over A2A.</p>
        </EmptyState>
      ) : (
        <KeysTable
          keys={view.keys}
          refused={refused}
          now={now}
          disabled={revoke.busy}
          onRevoke={(key) => {
            revoke.reset();
            setOutcome(null);
            setConfirming(key);
          }}
        />
      )}

      <h3 className="subhead">Issue a key</h3>
      <IssueKeyForm
        defaults={view?.defaults}
        skills={skills}
        busy={issue.busy}
        error={issue.error}
        onIssue={async (next) => {
          request.current = next;
          setOutcome(null);
          setIssued(null);
          return (await issue.run()) !== undefined;
        }}
      />

      <ConfirmDialog
        open={confirming !== null}
        title={confirming ? `Revoke the key for “${confirming.name}”?` : 'Revoke the key?'}
        confirmLabel="Revoke key"
        tone="danger"
        busy={revoke.busy}
        onCancel={() => setConfirming(null)}
        onConfirm={() => {
          const key = confirming;
          void revoke.run().then((done) => {
            if (!done || !key) return;
            setConfirming(null);
            setOutcome(
              `Revoked the key for “${key.name}” (${key.id}): its requests are refused from now on.`,
            );
          });
        }}
      >
        <p>
          Requests with it are refused from the next one on, at every replica within a second. That agent
          needs a new key to reach yours again; a revoked key cannot be restored.
        </p>
        {revoke.error ? <ErrorNotice error={revoke.error} title="Not revoked" /> : null}
      </ConfirmDialog>
    </Card>
  );
}

/** When each revoked or expired key was last refused, by key id (from Traffic, newest first). */
function lastRefused(traffic: readonly TrafficEntry[]): Map<string, string> {
  const last = new Map<string, string>();
  for (const entry of traffic) {
    const id = entry.keyStatus && entry.sender?.startsWith('a2a-key:') ? entry.sender.slice(8) : undefined;
    if (id && !last.has(id)) last.set(id, entry.time);
  }
  return last;
}

interface KeysTableProps {
  keys: A2AKeyView[];
  /** When a revoked or expired key was last refused, by id. */
  refused: ReadonlyMap<string, string>;
  now: number;
  disabled: boolean;
  onRevoke: (key: A2AKeyView) => void;
}

function KeysTable({ keys, refused, now, disabled, onRevoke }: KeysTableProps) {
  return (
    <table className="table a2a-keys-table">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Skills</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">Calls</th>
          <th scope="col">Expires</th>
          <th scope="col">
            <span className="visually-hidden">Status and actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id} data-testid="a2a-key-row" data-key-id={key.id} data-status={key.status}>
            <th scope="row">
              <span className="key-name">{key.name}</span>
              <span className="muted small">
                {' '}
                <code className="key-id">{key.id}</code>
                {limitsText(key)}
              </span>
            </th>
            <td className="scope-text" data-testid="a2a-key-skills">
              {key.skills ? scopeText(key.skills) : <span className="muted">{scopeText(undefined)}</span>}
            </td>
            <td>
              <When iso={key.createdAt} now={now} past />
            </td>
            <td>
              {key.lastUsedAt ? (
                <When iso={key.lastUsedAt} now={now} past />
              ) : (
                <span className="muted">never</span>
              )}
              {key.status !== 'active' && refused.has(key.id) ? (
                <div className="small" data-testid="a2a-key-still-used">
                  Still used: refused <When iso={refused.get(key.id)!} now={now} />
                </div>
              ) : null}
            </td>
            <td>{formatCount(key.calls)}</td>
            <td>
              {key.expiresAt ? <When iso={key.expiresAt} now={now} /> : <span className="muted">never</span>}
            </td>
            <td className="row-actions">
              {key.status === 'active' ? (
                <button
                  type="button"
                  className="button small danger-ghost"
                  aria-label={`Revoke the key for ${key.name} (${key.id})`}
                  disabled={disabled}
                  onClick={() => onRevoke(key)}
                >
                  Revoke…
                </button>
              ) : key.status === 'revoked' ? (
                <Badge tone="bad">{`revoked ${formatRelative(key.revokedAt, now, 'past')}`}</Badge>
              ) : (
                <Badge tone="neutral">expired</Badge>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function limitsText(key: A2AKeyView): string {
  const parts = [
    key.limits.requestsPerMinute === undefined
      ? ''
      : `${formatCount(key.limits.requestsPerMinute)} requests/min`,
    key.limits.tokensPerDay === undefined ? '' : `${formatCount(key.limits.tokensPerDay)} tokens/day`,
  ].filter(Boolean);
  return parts.length > 0 ? ` · ${parts.join(', ')}` : '';
}
