/**
 * The envelope log as the browser holds it: newest first, bounded, with pause. While paused, new entries
 * are counted and kept aside (also bounded), and shown on resume.
 */
import type { TrafficEntry } from '../api/contract';

export const TRAFFIC_LIMIT = 10_000;

export interface TrafficLogState {
  /** Shown, newest first. */
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
      const newestFirst = [...action.entries].reverse();
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

function prepend(newer: TrafficEntry[], older: TrafficEntry[]): TrafficEntry[] {
  if (newer.length >= TRAFFIC_LIMIT) return newer.slice(0, TRAFFIC_LIMIT);
  return newer.concat(older.slice(0, TRAFFIC_LIMIT - newer.length));
}

/**
 * A load merged with what the stream delivered meanwhile: ids increase within a run, so entries newer
 * than the load's newest stay on top and duplicates are dropped.
 */
function mergeNewestFirst(loaded: TrafficEntry[], current: TrafficEntry[]): TrafficEntry[] {
  const newest = loaded.reduce((max, entry) => Math.max(max, entry.id), -Infinity);
  const newer = current.filter((entry) => entry.id > newest);
  return prepend(newer, loaded);
}
