import { useId, useState, type FormEvent } from 'react';
import { parseTokenInput } from '../api/token';

interface TokenScreenProps {
  /** Why we are here: no token yet, or the console refused the one we had. */
  reason: 'missing' | 'refused';
  onToken: (token: string) => void;
}

/** How to get in: where the console URL with its token is printed and stored, and a field to paste it. */
export function TokenScreen({ reason, onToken }: TokenScreenProps) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const inputId = useId();
  const helpId = useId();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const token = parseTokenInput(value);
    if (!token) {
      setError('Paste the token, or the whole console URL that ends with #token=…');
      return;
    }
    onToken(token);
  };

  return (
    <main className="token-screen" data-testid="token-screen">
      <div className="token-card">
        <h1>
          <span className="brand-mark" aria-hidden="true" />
          Agent Bridge console
        </h1>
        {reason === 'refused' ? (
          <div className="notice error" role="alert">
            <p className="notice-title">The console refused this token.</p>
            <p className="notice-message">
              It may have been replaced (Settings: New console token, or <code>--new-console-token</code> at
              start): open the console with its current link.
            </p>
          </div>
        ) : (
          <p className="lead">This console needs its access token: it keeps other pages and programs out.</p>
        )}
        <h2>How to get in</h2>
        <ol className="steps-list">
          <li>
            Open the console URL that <code>npm run serve</code> printed when it started. It looks like{' '}
            <code>http://127.0.0.1:8788/#token=…</code>
          </li>
          <li>
            Or read it from <code>console.json</code> in the agent’s data folder (
            <code>{'{"url": "…", "token": "…"}'}</code>): by default <code>~/.config/Agent Bridge/</code> on
            Linux, <code>~/Library/Application Support/Agent Bridge/</code> on macOS,{' '}
            <code>%APPDATA%\Agent Bridge\</code> on Windows, or the folder given with <code>--data-dir</code>.
          </li>
        </ol>
        <form onSubmit={submit} className="token-form" noValidate>
          <label htmlFor={inputId}>Console token or URL</label>
          <div className="token-row">
            <input
              id={inputId}
              type="password"
              autoComplete="off"
              spellCheck={false}
              value={value}
              aria-describedby={helpId}
              aria-invalid={error ? true : undefined}
              onChange={(event) => {
                setValue(event.target.value);
                setError(null);
              }}
              placeholder="Paste the token"
            />
            <button type="submit" className="button primary">
              Open console
            </button>
          </div>
          <p id={helpId} className={error ? 'field-error' : 'hint'}>
            {error ?? 'Kept only in this browser tab, and forgotten when you close it.'}
          </p>
        </form>
      </div>
    </main>
  );
}
