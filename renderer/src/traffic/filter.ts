/**
 * TrafficFilter applied in the browser, with the semantics of `GET /api/traffic` (console-api.ts):
 * direction is `in` (calls to this agent, entries without a direction included) or `out` (calls the
 * operator's agent made through the bridge), protocol is `samvad` (entries without one included) or `a2a`, sender and skill match exactly, verdict is `accepted`,
 * `refused` (any refusal) or one pipeline step, status is a code (`429`) or a class (`4xx`), and text
 * matches case-insensitively against sender, callee, skill, code, message, traceId and diagnosis. Empty
 * fields do not filter.
 */
import type { TrafficEntry, TrafficFilter } from '../api/contract';

/** The form's state: every field a string, '' for "any" (direction too). */
export type TrafficFilterForm = { [K in keyof TrafficFilter]-?: string };

export const EMPTY_FILTER: TrafficFilterForm = {
  direction: '',
  protocol: '',
  sender: '',
  skill: '',
  verdict: '',
  status: '',
  text: '',
};

/** A status filter the console understands: `429`, or a class `1xx`..`5xx`. */
export function isValidStatusFilter(status: string): boolean {
  return /^\s*([1-5]xx|[1-5]\d\d)\s*$/i.test(status);
}

/** Compiles a filter once into a predicate, so 10,000 rows cost one pass of cheap checks. */
export function trafficPredicate(
  filter: TrafficFilter | Partial<TrafficFilterForm>,
): ((entry: TrafficEntry) => boolean) | null {
  const direction = filter.direction?.trim();
  const protocol = filter.protocol?.trim();
  const sender = filter.sender?.trim();
  const skill = filter.skill?.trim();
  const verdict = filter.verdict?.trim();
  const status = filter.status?.trim().toLowerCase();
  const text = filter.text?.trim().toLowerCase();
  if (!direction && !protocol && !sender && !skill && !verdict && !status && !text) return null;

  let statusMatch: ((code: number) => boolean) | null = null;
  if (status) {
    if (!isValidStatusFilter(status)) return () => false;
    const statusClass = /^([1-5])xx$/.exec(status)?.[1];
    statusMatch = statusClass
      ? (code) => Math.floor(code / 100) === Number(statusClass)
      : (code) => code === Number(status);
  }

  return (entry) => {
    if (direction && (entry.direction === 'out' ? 'out' : 'in') !== direction) return false;
    if (protocol && (entry.protocol ?? 'samvad') !== protocol) return false;
    if (sender && entry.sender !== sender) return false;
    if (skill && entry.skill !== skill) return false;
    if (verdict) {
      if (verdict === 'refused' ? entry.verdict === 'accepted' : entry.verdict !== verdict) return false;
    }
    if (statusMatch && !statusMatch(entry.status)) return false;
    if (text) {
      const fields = [
        entry.sender,
        entry.callee,
        entry.skill,
        entry.code,
        entry.message,
        entry.traceId,
        entry.diagnosis,
      ];
      if (!fields.some((field) => field !== undefined && field.toLowerCase().includes(text))) return false;
    }
    return true;
  };
}

/** The entries that pass; the same array when the filter is empty. */
export function filterTraffic(
  entries: readonly TrafficEntry[],
  filter: TrafficFilter | Partial<TrafficFilterForm>,
): readonly TrafficEntry[] {
  const predicate = trafficPredicate(filter);
  return predicate ? entries.filter(predicate) : entries;
}
