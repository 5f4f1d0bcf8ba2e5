import { useId, useState, type FormEvent } from 'react';
import type { ApiClient } from '../api/client';
import { useAction } from '../hooks/useAction';
import { OPENCLAW_INSTALL_URL, OPENCLAW_REMOTE_URL, remoteGatewayProblem } from '../lib/setup';

/**
 * Getting started, when no OpenClaw gateway is on this machine: where to install OpenClaw, or the address
 * and token of a gateway on another machine, saved as the gateway settings (the token is write-only: it is
 * sent, never shown again).
 */
export function NoLocalGateway({ api, onSaved }: { api: ApiClient; onSaved: () => void }) {
  return (
    <div className="no-local-gateway" data-testid="no-local-gateway">
      <p>
        No OpenClaw gateway on this machine?{' '}
        <a href={OPENCLAW_INSTALL_URL} target="_blank" rel="noreferrer">
          Install OpenClaw
        </a>{' '}
        and start its gateway: the bridge finds it by itself. Or connect to a gateway on another machine (
        <a href={OPENCLAW_REMOTE_URL} target="_blank" rel="noreferrer">
          how to reach one
        </a>
        ):
      </p>
      <RemoteGatewayForm api={api} onSaved={onSaved} />
    </div>
  );
}

function RemoteGatewayForm({ api, onSaved }: { api: ApiClient; onSaved: () => void }) {
  const id = useId();
  const [url, setUrl] = useState('');
  const [token, setToken] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [savedAt, setSavedAt] = useState<string | null>(null);
  const save = useAction(() => api.updateSettings({ gatewayUrl: url.trim(), gatewayToken: token.trim() }));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const problem = remoteGatewayProblem(url, token);
    setInvalid(problem ?? null);
    setSavedAt(null);
    if (problem) return;
    if (!(await save.run())) return;
    setSavedAt(url.trim());
    setToken('');
    onSaved();
  };
  const problem =
    invalid ?? (save.error ? `${save.error.message}${save.error.fix ? ` ${save.error.fix}` : ''}` : null);
  return (
    <form className="remote-gateway" onSubmit={(event) => void submit(event)} noValidate>
      <label htmlFor={`${id}-url`}>Gateway address</label>
      <input
        id={`${id}-url`}
        type="url"
        spellCheck={false}
        autoComplete="off"
        placeholder="https://gateway.example.com"
        value={url}
        aria-invalid={problem ? true : undefined}
        aria-describedby={`${id}-hint${problem ? ` ${id}-error` : ''}`}
        onChange={(event) => setUrl(event.target.value)}
      />
      <label htmlFor={`${id}-token`}>Gateway token</label>
      <input
        id={`${id}-token`}
        type="password"
        autoComplete="new-password"
        value={token}
        aria-invalid={problem ? true : undefined}
        onChange={(event) => setToken(event.target.value)}
      />
      <p id={`${id}-hint`} className="hint">
        The token goes with every call to that address: use https://, a private network (Tailscale) or an SSH
        tunnel, never plain http:// across the internet.
      </p>
      <button type="submit" className="button" disabled={save.busy}>
        {save.busy ? 'Connecting…' : 'Connect'}
      </button>
      {problem ? (
        <p id={`${id}-error`} className="field-error" data-testid="field-error">
          {problem}
        </p>
      ) : null}
      {savedAt && !problem ? (
        <p className="hint" role="status" data-testid="remote-gateway-saved">
          Saved: the bridge now checks the gateway at {savedAt}.
        </p>
      ) : null}
    </form>
  );
}
