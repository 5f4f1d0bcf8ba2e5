/**
 * Credentials for A2A agents that require one, inside Calls out: the operator keeps one per agent URL (a
 * bearer token, or an API key in a header they name) and removes it. Write-only: the console never gets a
 * value back, and the field is emptied once it is sent.
 */
import { useCallback, useId, useState, type FormEvent } from 'react';
import type { ApiClient, ApiRequestError } from '../api/client';
import type { OutboundCredentialScheme } from '../api/contract';
import { asApiError, useAction } from '../hooks/useAction';
import { useLoaded } from '../hooks/useLoaded';
import { ErrorNotice, Loading, Notice } from './States';

export function OutboundCredentials({ api }: { api: ApiClient }) {
  const id = useId();
  const [url, setUrl] = useState('');
  const [scheme, setScheme] = useState<OutboundCredentialScheme>('bearer');
  const [header, setHeader] = useState('');
  const [value, setValue] = useState('');

  const { view, loadError, show } = useLoaded(useCallback(() => api.credentials(), [api]));

  const keep = useAction(async () => {
    const body = {
      url: url.trim(),
      scheme,
      value,
      ...(scheme === 'apiKey' ? { header: header.trim() } : {}),
    };
    const next = await api.keepCredential(body);
    show(next);
    setUrl('');
    setHeader('');
    setValue('');
    return next;
  });
  const [removing, setRemoving] = useState<string | null>(null);
  const [removeError, setRemoveError] = useState<ApiRequestError | null>(null);
  const remove = async (target: string) => {
    setRemoving(target);
    setRemoveError(null);
    try {
      show(await api.removeCredential(target));
    } catch (error) {
      setRemoveError(asApiError(error));
    } finally {
      setRemoving(null);
    }
  };

  // The value leaves the page with the request, kept or not: it is never shown or held after.
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void keep.run().finally(() => setValue(''));
  };
  const fieldError = (field: string) =>
    keep.error?.fields.find((problem) => problem.field === field)?.message;

  if (!view) {
    return loadError ? <ErrorNotice error={loadError} title="Cannot load the credentials" /> : <Loading />;
  }
  return (
    <div data-testid="outbound-credentials-section">
      <p className="muted small">
        Some A2A agents require a credential. The bridge keeps one per agent and sends it with every request
        to exactly that address; your agent never sees it, and no page, log or answer shows it again.
      </p>
      {view.problem ? <Notice tone="warning" message={view.problem} /> : null}
      {view.credentials.length === 0 ? (
        <p className="muted small" data-testid="outbound-credentials-empty">
          None kept.
        </p>
      ) : (
        <ul className="outbound-allowed" data-testid="outbound-credentials">
          {view.credentials.map((credential) => (
            <li key={credential.url} data-url={credential.url}>
              <span>
                <code>{credential.url}</code>{' '}
                <span className="muted small">
                  {credential.scheme === 'bearer' ? 'bearer token' : `API key in ${credential.header ?? ''}`},
                  kept {new Date(credential.addedAt).toLocaleDateString()}
                </span>
              </span>
              <button
                type="button"
                className="button small"
                disabled={removing !== null}
                onClick={() => void remove(credential.url)}
              >
                {removing === credential.url ? 'Removing…' : 'Remove'}
              </button>
            </li>
          ))}
        </ul>
      )}
      {removeError ? <ErrorNotice error={removeError} title="Not removed" /> : null}
      <form className="advance-form" onSubmit={submit} noValidate>
        <label htmlFor={`${id}-url`}>Agent URL</label>
        <input
          id={`${id}-url`}
          type="text"
          spellCheck={false}
          autoComplete="off"
          placeholder="https://agent.example.com"
          value={url}
          aria-invalid={fieldError('url') ? true : undefined}
          onChange={(event) => setUrl(event.target.value)}
        />
        <label htmlFor={`${id}-scheme`}>Sent as</label>
        <select
          id={`${id}-scheme`}
          value={scheme}
          onChange={(event) => setScheme(event.target.value as OutboundCredentialScheme)}
        >
          <option value="bearer">A bearer token (Authorization: Bearer)</option>
          <option value="apiKey">An API key in a header</option>
        </select>
        {scheme === 'apiKey' ? (
          <>
            <label htmlFor={`${id}-header`}>Header</label>
            <input
              id={`${id}-header`}
              type="text"
              spellCheck={false}
              autoComplete="off"
              placeholder="X-API-Key"
              value={header}
              aria-invalid={fieldError('header') ? true : undefined}
              onChange={(event) => setHeader(event.target.value)}
            />
          </>
        ) : null}
        <label htmlFor={`${id}-value`}>Credential</label>
        <input
          id={`${id}-value`}
          type="password"
          spellCheck={false}
          autoComplete="new-password"
          value={value}
          aria-invalid={fieldError('value') ? true : undefined}
          onChange={(event) => setValue(event.target.value)}
        />
        {keep.error ? (
          <p className="field-error" data-testid="credential-error">
            {keep.error.message}
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" className="button" disabled={keep.busy || url.trim() === '' || value === ''}>
            {keep.busy ? 'Keeping…' : 'Keep'}
          </button>
        </div>
      </form>
    </div>
  );
}
