import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiRequestError } from '../api/client';
import { asApiError } from './useAction';

/**
 * What a card shows from one API read: loaded again whenever `fetch` or one of `reloadOn` changes, with
 * only the newest answer shown (a slow load must not undo a change the operator made meanwhile: `show`
 * puts an action's answer in place and makes any load still running stale).
 */
export function useLoaded<T>(fetch: () => Promise<T>, reloadOn: readonly unknown[] = []) {
  const [view, setView] = useState<T | null>(null);
  const [loadError, setLoadError] = useState<ApiRequestError | null>(null);
  const generation = useRef(0);
  const show = useCallback((next: T) => {
    generation.current += 1;
    setView(next);
    setLoadError(null);
  }, []);
  const load = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const next = await fetch();
      if (mine !== generation.current) return;
      setView(next);
      setLoadError(null);
    } catch (error) {
      if (mine === generation.current) setLoadError(asApiError(error));
    }
  }, [fetch]);
  useEffect(() => {
    void load();
  }, [load, ...reloadOn]);
  return { view, loadError, show, load };
}
