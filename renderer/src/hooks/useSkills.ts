import { useCallback, useEffect } from 'react';
import type { ApiClient, ApiRequestError } from '../api/client';
import type { SkillsResponse } from '../api/contract';
import { useLoaded } from './useLoaded';

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
  const fetchSkills = useCallback(() => api.skills(), [api]);
  const { view, loadError, show, load } = useLoaded<SkillsResponse>(fetchSkills, [version]);

  useEffect(() => {
    if (pollMs <= 0) return;
    const timer = setInterval(() => void load(), pollMs);
    return () => clearInterval(timer);
  }, [load, pollMs]);

  return { view, error: loadError, reload: load, apply: show };
}
