import { useState } from 'react';
import type { KeyView } from '../api/contract';
import { Badge } from '../components/Badge';
import { Card } from '../components/Card';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { ErrorNotice, EmptyState, Loading, Notice } from '../components/States';
import { useAction } from '../hooks/useAction';
import { formatDateTime, formatDuration } from '../lib/format';
import type { PageProps } from './types';

type Pending = { kind: 'rotate' } | { kind: 'revoke'; key: KeyView };

export function Keys({ api, data }: PageProps) {
  const { status, statusError, refreshStatus } = data;
  const [pending, setPending] = useState<Pending | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const action = useAction(async () => {
    if (!pending) return;
    if (pending.kind === 'rotate') await api.rotateKey();
    else await api.revokeKey(pending.key.kid);
    await refreshStatus();
    return pending;
  });

  if (!status) {
    return statusError ? <ErrorNotice error={statusError} title="Cannot load the keys" /> : <Loading />;
  }
  const keys = status.keys;
  const signing = keys.find((key) => key.signing);
  const ttl = status.agent.card.cardTTL;
  const ttlText = ttl > 0 ? formatDuration(ttl) : 'no time (the card TTL is 0)';

  const confirm = async () => {
    const finished = await action.run();
    if (!finished) return;
    setPending(null);
    setDone(
      finished.kind === 'rotate'
        ? 'Rotated: a new key signs from now on. The card lists it already.'
        : `Revoked ${finished.key.kid}: signatures made with it no longer verify.`,
    );
  };

  return (
    <div className="page keys">
      <h1 className="visually-hidden">Keys</h1>
      {done ? <Notice tone="success" message={done} testId="keys-result" /> : null}
      <Card
        title="Signing keys"
        help={{ to: 'docs/security.md#your-agents-signing-keys', topic: 'signing keys' }}
        aside={
          <button
            type="button"
            className="button primary"
            onClick={() => {
              action.reset();
              setDone(null);
              setPending({ kind: 'rotate' });
            }}
          >
            Rotate key…
          </button>
        }
      >
        <p className="muted">
          The agent signs every reply and its card with the signing key; callers check those signatures with
          the public keys its card lists. Private keys never leave this machine.
        </p>
        {keys.length === 0 ? (
          <EmptyState title="No keys yet">The agent creates its first key when it starts.</EmptyState>
        ) : (
          <table className="table keys-table">
            <thead>
              <tr>
                <th scope="col">Key id</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
                <th scope="col">Public key</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr
                  key={key.kid}
                  data-testid="key-row"
                  data-kid={key.kid}
                  data-active={key.active}
                  data-signing={key.signing}
                >
                  <th scope="row">
                    <code className="key-id">{key.kid}</code>
                  </th>
                  <td>{formatDateTime(key.createdAt)}</td>
                  <td>
                    <div className="badges">
                      {key.signing ? <Badge tone="info">signing</Badge> : null}
                      <Badge tone={key.active ? 'ok' : 'neutral'}>{key.active ? 'active' : 'inactive'}</Badge>
                    </div>
                    {key.retiredAt ? (
                      <div className="muted small">
                        retired {formatDateTime(key.retiredAt)}
                        {key.inactiveFrom && key.active
                          ? `; verifies until ${formatDateTime(key.inactiveFrom)}`
                          : ''}
                      </div>
                    ) : null}
                  </td>
                  <td>
                    <span className="copyable">
                      <code className="key-text" title={key.publicKey}>
                        {key.publicKey}
                      </code>
                      <CopyButton value={key.publicKey} label={`Copy public key ${key.kid}`} />
                    </span>
                  </td>
                  <td className="row-actions">
                    <button
                      type="button"
                      className="button small danger-ghost"
                      disabled={!key.active}
                      aria-label={`Revoke key ${key.kid}`}
                      onClick={() => {
                        action.reset();
                        setDone(null);
                        setPending({ kind: 'revoke', key });
                      }}
                    >
                      Revoke…
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>

      <ConfirmDialog
        open={pending?.kind === 'rotate'}
        title="Rotate the signing key?"
        confirmLabel="Rotate"
        busy={action.busy}
        onCancel={() => setPending(null)}
        onConfirm={() => void confirm()}
      >
        <p>A new key is created and signs every reply and the card from now on.</p>
        <p>
          The current key
          {signing ? (
            <>
              {' '}
              (<code>{signing.kid}</code>)
            </>
          ) : null}{' '}
          stays listed and keeps verifying for one card TTL ({ttlText}), so callers with a cached card keep
          working. After that it becomes inactive.
        </p>
        {action.error ? <ErrorNotice error={action.error} title="Rotation failed" /> : null}
      </ConfirmDialog>

      <ConfirmDialog
        open={pending?.kind === 'revoke'}
        title={pending?.kind === 'revoke' ? `Revoke key ${pending.key.kid}?` : 'Revoke key?'}
        confirmLabel="Revoke"
        tone="danger"
        busy={action.busy}
        onCancel={() => setPending(null)}
        onConfirm={() => void confirm()}
      >
        <p>
          <strong>Signatures made with this key fail immediately:</strong> the card marks it inactive now, and
          callers that fetch the card stop accepting anything it signed.
        </p>
        {pending?.kind === 'revoke' && pending.key.signing ? (
          <p>
            This is the signing key, so a new key is created first and signs from now on. Callers with a
            cached card that does not list the new key yet fail to verify replies until they fetch the card
            again (within {ttlText}).
          </p>
        ) : (
          <p>The signing key does not change. Use this when a key may have leaked.</p>
        )}
        {action.error ? <ErrorNotice error={action.error} title="Revocation failed" /> : null}
      </ConfirmDialog>
    </div>
  );
}
