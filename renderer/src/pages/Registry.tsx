import { Address } from '../components/Address';
import { Badge } from '../components/Badge';
import { Card, Field } from '../components/Card';
import { CopyButton } from '../components/CopyButton';
import { ErrorNotice, Loading, Notice } from '../components/States';
import { useAction } from '../hooks/useAction';
import { formatDateTime } from '../lib/format';
import { registryFix } from '../lib/registry-advice';
import { registryGlance } from '../lib/states';
import { sectionHref, type PageProps } from './types';

export function Registry({ api, data }: PageProps) {
  const { status, statusError, refreshStatus } = data;
  const register = useAction(async () => {
    try {
      await api.register();
      return true;
    } finally {
      await refreshStatus();
    }
  });

  if (!status) {
    return statusError ? (
      <ErrorNotice error={statusError} title="Cannot load the registry state" />
    ) : (
      <Loading />
    );
  }
  const registry = status.registry;
  const glance = registryGlance(registry);
  const registering = register.busy || registry.status === 'registering';
  const registered = registry.status === 'registered';

  return (
    <div className="page registry">
      <h1 className="visually-hidden">Registry</h1>
      <Card
        title="Registration"
        testId="registry-state"
        help={{ to: 'docs/registry.md', topic: 'the registry' }}
        aside={
          <Badge tone={register.busy ? 'info' : glance.tone}>
            {register.busy ? 'Registering…' : glance.label}
          </Badge>
        }
      >
        <div data-state={registry.status} className="state-body">
          <p className="muted">
            Registering lists this agent’s public URL in the registry, so other agents can find it by name and
            specialization. It re-registers by itself when the public URL changes.
          </p>
          <dl className="fields" data-testid="registry-target">
            {registry.registryUrl ? (
              <Field label="Registry">
                <Address value={registry.registryUrl} />{' '}
                <a className="small" href={sectionHref('settings', 'registry')}>
                  change in Settings → Registry
                </a>
              </Field>
            ) : null}
            <Field label="Will register">
              <Address value={status.agent.url} />
            </Field>
          </dl>
          {registered && registry.registryUrl && registry.registryUrl !== registry.record.registry ? (
            <Notice
              tone="info"
              title="The registry setting changed"
              message={`Listed at ${registry.record.registry}; Re-register lists it at ${registry.registryUrl}.`}
              testId="registry-moved"
            />
          ) : null}

          {registered ? (
            <dl className="fields record" data-testid="registry-record">
              <Field label="Registry">
                <Address value={registry.record.registry} />
              </Field>
              <Field label="URL">
                <span className="copyable">
                  <Address value={registry.record.url} />
                  <CopyButton value={registry.record.url} label="Copy registered URL" />
                </span>
              </Field>
              <Field label="Agent id">
                <Address value={registry.record.id} />
              </Field>
              <Field label="Name">{registry.record.name}</Field>
              <Field label="Registered">{formatDateTime(registry.record.registeredAt)}</Field>
            </dl>
          ) : null}

          {registering ? (
            <div className="progress" role="status" data-testid="registry-progress">
              <span className="spinner" aria-hidden="true" /> Registering{' '}
              <code>{registry.status === 'registering' ? registry.url : status.agent.url}</code>…
              <div className="progress-bar" aria-hidden="true">
                <span />
              </div>
            </div>
          ) : null}

          {register.error ? (
            <ErrorNotice error={register.error} title="Registration failed" />
          ) : registry.status !== 'registering' && registry.lastError ? (
            <Notice
              tone="error"
              title="The last registration failed"
              message={registry.lastError.message}
              fix={registryFix(registry.lastError, status.tunnel)}
              testId="registry-error"
            >
              <p className="notice-meta">At {formatDateTime(registry.lastError.at)}</p>
            </Notice>
          ) : null}
          {register.result && !register.error && registered ? (
            <Notice tone="success" message="Registered: the record above is what the registry now holds." />
          ) : null}

          <div className="actions">
            <button
              type="button"
              className="button primary"
              onClick={() => void register.run()}
              disabled={registering}
            >
              {registering ? 'Registering…' : registered ? 'Re-register' : 'Register'}
            </button>
          </div>
        </div>
      </Card>
    </div>
  );
}
