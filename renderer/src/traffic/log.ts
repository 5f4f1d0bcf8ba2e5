/**
 * The traffic log (calls in and out, SAMVAD and A2A) as the browser holds it: newest first by the time each call started, bounded, with pause.
 * A call is logged when it ends, so a long one (a call out that polls its task, a stream) arrives after
 * calls that started later: it is put in its place, not on top. While paused, new entries are counted and
 * kept aside (also bounded), and shown on resume.
 */
import type { TrafficEntry } from '../api/contract';

export const TRAFFIC_LIMIT = 10_000;

export interface TrafficLogState {
  /** Shown, newest first (by start time). */
  entries: TrafficEntry[];
  /** Arrived while paused, newest first; not shown yet. */
  pending: TrafficEntry[];
  /** How many arrived while paused (may exceed what `pending` keeps). */
  pendingCount: number;
  paused: boolean;
  /** The stream was reset while paused: on resume, `pending` replaces `entries`. */
  replaceOnResume: boolean;
  /**
   * Between a stream (re)open and the load that follows: what streams in meanwhile waits in `fresh`, since a
   * restarted console numbers its entries from 1 again and they must not mix with the old run's.
   */
  resyncing: boolean;
  fresh: TrafficEntry[];
  /** False until the first load from GET /api/traffic. */
  loaded: boolean;
  /** How many entries the console holds in all (from the last load). */
  total: number;
}

export type TrafficLogAction =
  /** New entries from the stream, oldest first (arrival order). */
  | { type: 'received'; entries: TrafficEntry[] }
  /** A full load from GET /api/traffic, newest first. */
  | { type: 'loaded'; entries: TrafficEntry[]; total: number }
  /** The stream reopened (maybe a new console run): the next load replaces what we hold. */
  | { type: 'reset' }
  | { type: 'pause' }
  | { type: 'resume' };

export const initialTrafficLog: TrafficLogState = {
  entries: [],
  pending: [],
  pendingCount: 0,
  paused: false,
  replaceOnResume: false,
  resyncing: false,
  fresh: [],
  loaded: false,
  total: 0,
};

export function trafficLogReducer(state: TrafficLogState, action: TrafficLogAction): TrafficLogState {
  switch (action.type) {
    case 'received': {
      if (action.entries.length === 0) return state;
      const newestFirst = [...action.entries].sort(newerFirst);
      if (state.resyncing) {
        const fresh = prepend(newestFirst, state.fresh);
        return state.paused
          ? { ...state, fresh, pendingCount: state.pendingCount + action.entries.length }
          : { ...state, fresh };
      }
      if (state.paused) {
        return {
          ...state,
          pending: prepend(newestFirst, state.pending),
          pendingCount: state.pendingCount + action.entries.length,
        };
      }
      return { ...state, entries: prepend(newestFirst, state.entries) };
    }
    case 'loaded': {
      const streamed = state.resyncing ? state.fresh : state.paused ? state.pending : state.entries;
      const merged = mergeNewestFirst(action.entries, streamed);
      const common = { loaded: true, total: action.total, resyncing: false, fresh: [] };
      return state.paused
        ? { ...state, ...common, pending: merged, replaceOnResume: state.replaceOnResume || state.resyncing }
        : { ...state, ...common, entries: merged };
    }
    case 'reset':
      // What is shown stays until the load replaces it: no flash of an empty log on every reconnect.
      return { ...state, resyncing: true, fresh: [] };
    case 'pause':
      return state.paused ? state : { ...state, paused: true, pending: [], pendingCount: 0 };
    case 'resume': {
      if (!state.paused) return state;
      const entries = state.replaceOnResume ? state.pending : prepend(state.pending, state.entries);
      return { ...state, paused: false, entries, pending: [], pendingCount: 0, replaceOnResume: false };
    }
  }
}

/**
 * Newest first: the later start time first (`time` is when the call started; ISO 8601 in UTC, so the text
 * orders as the time does), then the later logged.
 */
export function newerFirst(a: TrafficEntry, b: TrafficEntry): number {
  if (a.time !== b.time) return a.time < b.time ? 1 : -1;
  return b.id - a.id;
}

/** Two lists, each newest first, as one (at most TRAFFIC_LIMIT): new arrivals mostly go on top, in one pass. */
function prepend(newer: TrafficEntry[], older: TrafficEntry[]): TrafficEntry[] {
  const merged: TrafficEntry[] = [];
  let i = 0;
  let j = 0;
  while (merged.length < TRAFFIC_LIMIT && (i < newer.length || j < older.length)) {
    const next =
      j >= older.length || (i < newer.length && newerFirst(newer[i]!, older[j]!) <= 0)
        ? newer[i++]
        : older[j++];
    merged.push(next!);
  }
  return merged;
}

/**
 * A load merged with what the stream delivered meanwhile: ids increase within a run, so entries logged
 * after the load's newest are added and duplicates dropped.
 */
function mergeNewestFirst(loaded: TrafficEntry[], current: TrafficEntry[]): TrafficEntry[] {
  const newest = loaded.reduce((max, entry) => Math.max(max, entry.id), -Infinity);
  const newer = current.filter((entry) => entry.id > newest);
  return prepend(newer, [...loaded].sort(newerFirst));
}
