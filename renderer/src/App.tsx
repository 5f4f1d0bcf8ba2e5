import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createApiClient } from './api/client';
import type { EventSourceLike } from './api/events';
import { forgetToken, storeToken, takeToken, tokenFromHash } from './api/token';
import { ConnectionBadge } from './components/ConnectionBadge';
import { DemoBadge } from './components/DemoBadge';
import { Notice } from './components/States';
import { TokenScreen } from './components/TokenScreen';
import { useConsole } from './hooks/useConsole';
import { settingLabel } from './settings/form';
import { helpFromHash } from './help/docs';
import { Access } from './pages/Access';
import { Help } from './pages/Help';
import { Keys } from './pages/Keys';
import { Overview } from './pages/Overview';
import { Registry } from './pages/Registry';
import { Settings } from './pages/Settings';
import { Skills } from './pages/Skills';
import { Traffic } from './pages/Traffic';
import { PAGES, pageFromHash, pageHref, type PageProps } from './pages/types';

export interface AppProps {
  /** Tests pass an EventSource double. */
  createEventSource?: (url: string) => EventSourceLike;
}

/** The product's name; the card's name shows beside it only when the operator chose another. */
const BRAND = 'Agent Bridge';

type TokenState = { token: string } | { token: null; reason: 'missing' | 'refused' };

export function App({ createEventSource }: AppProps) {
  const [access, setAccess] = useState<TokenState>(() => {
    const token = takeToken();
    return token ? { token } : { token: null, reason: 'missing' };
  });

  // A console URL opened (or pasted) while the page is open: take its token too.
  useEffect(() => {
    const onHash = () => {
      if (!tokenFromHash(window.location.hash)) return;
      const token = takeToken();
      if (token) setAccess({ token });
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const onUnauthorized = useCallback(() => {
    forgetToken();
    setAccess({ token: null, reason: 'refused' });
  }, []);
  // This tab asked for a new console token: it goes on with it (the console reloads its data).
  const [tokenReplaced, setTokenReplaced] = useState(false);
  const replaceToken = useCallback((token: string) => {
    storeToken(token);
    setTokenReplaced(true);
    setAccess({ token });
  }, []);

  if (access.token === null) {
    return (
      <TokenScreen
        reason={access.reason}
        onToken={(token) => {
          storeToken(token);
          setAccess({ token });
        }}
      />
    );
  }
  return (
    <Console
      key={access.token}
      token={access.token}
      onUnauthorized={onUnauthorized}
      replaceToken={replaceToken}
      tokenReplaced={tokenReplaced}
      createEventSource={createEventSource}
    />
  );
}

interface ConsoleProps {
  token: string;
  onUnauthorized: () => void;
  replaceToken: (token: string) => void;
  tokenReplaced: boolean;
  createEventSource?: (url: string) => EventSourceLike;
}

function Console({ token, onUnauthorized, replaceToken, tokenReplaced, createEventSource }: ConsoleProps) {
  const api = useMemo(() => createApiClient({ token, onUnauthorized }), [token, onUnauthorized]);
  const data = useConsole(api, { onUnauthorized, createEventSource });
  const { hash, followed } = useHash();
  const page = pageFromHash(hash);
  // A help page (#/help/<page>/<heading>) is no tab: it opens from the pages' Help links.
  const help = helpFromHash(hash);
  const main = useRef<HTMLElement>(null);
  const { status, connection } = data;

  const label = help ? 'Help' : (PAGES.find((p) => p.id === page)?.label ?? 'Overview');
  useEffect(() => {
    document.title = `${label} · Agent Bridge`;
  }, [label]);

  const restartNeeded = status?.restartNeeded ?? [];
  // SAMVAD senders and A2A callers that knocked alike wait on the Access page.
  const pending = (status?.access.pending ?? 0) + (status?.access.knocks?.waiting ?? 0);
  const props: PageProps = { api, data, replaceToken, tokenReplaced };
  return (
    <div className={`app ${page === 'traffic' ? 'fill' : ''}`}>
      <a
        className="skip-link"
        href="#main"
        onClick={(event) => {
          // Not a hash change: the fragment is the page route.
          event.preventDefault();
          const target = main.current;
          if (!target) return;
          // Focusable for this jump only: with a lasting tabindex, any click in the page would focus <main>
          // and leave keyboard focus inside the page, past the skip link and the tabs.
          target.tabIndex = -1;
          target.addEventListener('blur', () => target.removeAttribute('tabindex'), { once: true });
          target.focus();
        }}
      >
        Skip to content
      </a>
      <header className="topbar">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          <span className="brand-name">{BRAND}</span>
          {status && status.agent.card.name.trim() !== BRAND ? (
            <span className="brand-agent" data-testid="brand-agent" title={status.agent.card.name}>
              {status.agent.card.name}
            </span>
          ) : null}
          {status?.demo ? <DemoBadge /> : null}
        </div>
        <ConnectionBadge state={connection} />
      </header>
      <nav className="tabs" aria-label="Pages">
        <ul>
          {PAGES.map((item) => (
            <li key={item.id}>
              <a
                href={pageHref(item.id)}
                className="tab"
                aria-current={item.id === page && !help ? 'page' : undefined}
                data-testid={`nav-${item.id}`}
              >
                {item.label}
                {item.id === 'access' && pending > 0 ? (
                  <span className="tab-count" data-testid="pending-count">
                    {' '}
                    ({pending})
                  </span>
                ) : null}
                {item.id === 'traffic' && data.traffic.paused ? (
                  <span className="tab-note"> (paused)</span>
                ) : null}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main} className="main">
        {connection.status === 'reconnecting' ? (
          <Notice
            tone="warning"
            title="Reconnecting to the console…"
            message="What you see may be out of date until the connection is back; it retries by itself."
            testId="reconnecting-banner"
          />
        ) : null}
        {restartNeeded.length > 0 && page !== 'settings' ? (
          <Notice tone="warning" title="Restart needed" testId="restart-banner">
            <p className="notice-message">
              Restart the agent to apply: {restartNeeded.map(settingLabel).join(', ')}.
            </p>
          </Notice>
        ) : null}
        {help ? (
          <Help page={help.page} section={help.section} followed={followed} />
        ) : (
          <>
            {page === 'overview' ? <Overview {...props} /> : null}
            {page === 'traffic' ? <Traffic {...props} /> : null}
            {page === 'skills' ? <Skills {...props} /> : null}
            {page === 'access' ? <Access {...props} /> : null}
            {page === 'keys' ? <Keys {...props} /> : null}
            {page === 'registry' ? <Registry {...props} /> : null}
            {page === 'settings' ? <Settings {...props} /> : null}
          </>
        )}
      </main>
    </div>
  );
}

/** The fragment, and whether it changed since the console opened (a link was followed). */
function useHash(): { hash: string; followed: boolean } {
  const [state, setState] = useState(() => ({ hash: window.location.hash, followed: false }));
  useEffect(() => {
    const onHash = () => setState({ hash: window.location.hash, followed: true });
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return state;
}
