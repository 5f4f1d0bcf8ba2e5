import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiClient, ApiRequestError } from '../api/client';
import type { SkillsResponse } from '../api/contract';
import { asApiError } from './useAction';

export interface SkillsState {
  /** The last answer of GET /api/skills (or of a change), null until the first. */
  view: SkillsResponse | null;
  error: ApiRequestError | null;
  reload: () => Promise<void>;
  /** Shows the answer of a change at once (a slower load started before it is then dropped). */
  apply: (next: SkillsResponse) => void;
}

/**
 * The published skills, loaded when `version` goes up (`data.skillsVersion`: a skill, a setting or the
 * gateway changed) and every `pollMs` (their use today), for the Skills page, Traffic's filter and Access's
 * scopes. Only the newest answer is shown.
 */
export function useSkills(api: ApiClient, version: number, pollMs = 0): SkillsState {
  const [view, setView] = useState<SkillsResponse | null>(null);
  const [error, setError] = useState<ApiRequestError | null>(null);
  const generation = useRef(0);

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const next = await api.skills();
      if (mine !== generation.current) return;
      setView(next);
      setError(null);
    } catch (caught) {
      if (mine === generation.current) setError(asApiError(caught));
    }
  }, [api]);

  const apply = useCallback((next: SkillsResponse) => {
    generation.current += 1;
    setView(next);
    setError(null);
  }, []);

  useEffect(() => {
    void reload();
  }, [reload, version]);

  useEffect(() => {
    if (pollMs <= 0) return;
    const timer = setInterval(() => void reload(), pollMs);
    return () => clearInterval(timer);
  }, [reload, pollMs]);

  return { view, error, reload, apply };
}
