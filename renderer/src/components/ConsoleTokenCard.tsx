import { useState } from 'react';
import type { ApiClient } from '../api/client';
import { useAction } from '../hooks/useAction';
import { Card } from './Card';
import { ConfirmDialog } from './ConfirmDialog';
import { ErrorNotice, Notice } from './States';

interface ConsoleTokenCardProps {
  api: ApiClient;
  /** Takes the new token into this tab (the console then reloads with it). */
  replaceToken?: (token: string) => void;
  /** This tab replaced the token (the card was shown again with the new one). */
  replaced?: boolean;
}

/** The console's own token: kept across restarts, replaced only when the operator asks. */
export function ConsoleTokenCard({ api, replaceToken, replaced = false }: ConsoleTokenCardProps) {
  const [confirming, setConfirming] = useState(false);
  const renew = useAction(async () => {
    const { token } = await api.newConsoleToken();
    setConfirming(false);
    replaceToken?.(token);
    return token;
  });
  return (
    <Card
      title="Console access"
      testId="console-token-card"
      help={{ to: 'docs/console.md#open-it', topic: 'the console token' }}
    >
      <p className="muted">
        The console token opens this console. It stays the same when the agent restarts, so open tabs and
        saved links keep working. Replace it if it may have been seen (a shared screen, a log): every earlier
        link and every other open tab is then refused, and this tab switches to the new token. On the machine,{' '}
        <code>--new-console-token</code> does the same at start.
      </p>
      {replaced ? (
        <Notice
          tone="success"
          title="A new console token is in use."
          message="Earlier links and other tabs no longer work: open the console again with the new link (console.json in the data dir)."
          testId="console-token-replaced"
        />
      ) : null}
      {renew.error ? <ErrorNotice error={renew.error} title="The token was not replaced" /> : null}
      <div className="actions">
        <button type="button" className="button" onClick={() => setConfirming(true)}>
          New console token…
        </button>
      </div>
      <ConfirmDialog
        open={confirming}
        title="Replace the console token?"
        confirmLabel="Replace token"
        tone="danger"
        busy={renew.busy}
        onConfirm={() => void renew.run()}
        onCancel={() => setConfirming(false)}
      >
        <p>
          Every earlier console link, and every other open tab or window, stops working at once. This tab goes
          on with the new token.
        </p>
      </ConfirmDialog>
    </Card>
  );
}
