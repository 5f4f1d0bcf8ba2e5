import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiRequestError } from '../api/client';

export interface ActionState<T> {
  run: () => Promise<T | undefined>;
  busy: boolean;
  error: ApiRequestError | null;
  result: T | undefined;
  reset: () => void;
}

/** One button's request: busy while it runs, its result or its error after. */
export function useAction<T>(action: () => Promise<T>): ActionState<T> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiRequestError | null>(null);
  const [result, setResult] = useState<T | undefined>(undefined);
  const mounted = useRef(true);
  const latest = useRef(action);
  useEffect(() => {
    latest.current = action;
  });
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const run = useCallback(async () => {
    setBusy(true);
    setError(null);
    try {
      const value = await latest.current();
      if (mounted.current) setResult(value);
      return value;
    } catch (caught) {
      if (mounted.current) setError(asApiError(caught));
      return undefined;
    } finally {
      if (mounted.current) setBusy(false);
    }
  }, []);
  const reset = useCallback(() => {
    setError(null);
    setResult(undefined);
  }, []);
  return { run, busy, error, result, reset };
}

export function asApiError(error: unknown): ApiRequestError {
  if (error instanceof ApiRequestError) return error;
  return new ApiRequestError(0, error instanceof Error ? error.message : String(error));
}
