/**
 * The console token: it arrives in the URL fragment (`#token=...`, never sent to servers or logs), is kept in
 * sessionStorage (this tab only, gone when it closes) and is removed from the address bar at once, so it does
 * not linger in history, bookmarks or a shared screen.
 */
export const TOKEN_STORAGE_KEY = 'agent-bridge.console-token';

export interface TokenEnvironment {
  location: Pick<Location, 'hash' | 'pathname' | 'search'>;
  history: Pick<History, 'replaceState' | 'state'>;
  sessionStorage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
}

/** The token in a fragment like `#token=abc`, or null. */
export function tokenFromHash(hash: string): string | null {
  const fragment = hash.replace(/^#/, '');
  if (!fragment.includes('token=')) return null;
  const token = new URLSearchParams(fragment.replace(/^\/?\??/, '')).get('token')?.trim();
  return token ? token : null;
}

/**
 * What the operator pasted: a bare token, or the whole console URL as `npm run serve` prints it
 * (`http://127.0.0.1:8788/#token=...`). Null when empty.
 */
export function parseTokenInput(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const hashAt = trimmed.indexOf('#');
  if (hashAt >= 0) return tokenFromHash(trimmed.slice(hashAt));
  if (trimmed.startsWith('token=')) return tokenFromHash(`#${trimmed}`);
  return trimmed;
}

/**
 * Takes the token from the address bar (storing it and erasing it from the URL), else the one this tab
 * stored before; null when there is none.
 */
export function takeToken(env: TokenEnvironment = window): string | null {
  const fromHash = tokenFromHash(env.location.hash);
  if (fromHash) {
    storeToken(fromHash, env);
    // replaceState, not a new entry: the token must not stay in the history either.
    env.history.replaceState(env.history.state, '', `${env.location.pathname}${env.location.search}`);
    return fromHash;
  }
  try {
    return env.sessionStorage.getItem(TOKEN_STORAGE_KEY) || null;
  } catch {
    return null;
  }
}

export function storeToken(token: string, env: Pick<TokenEnvironment, 'sessionStorage'> = window): void {
  try {
    env.sessionStorage.setItem(TOKEN_STORAGE_KEY, token);
  } catch {
    // Storage disabled: the token lives in memory for this page only.
  }
}

export function forgetToken(env: Pick<TokenEnvironment, 'sessionStorage'> = window): void {
  try {
    env.sessionStorage.removeItem(TOKEN_STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
}
