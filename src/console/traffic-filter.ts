import { PIPELINE_STEPS, type TrafficEntry, type TrafficFilter } from '../protocol/console-api.js';
import { ConsoleError, type FieldProblem } from './errors.js';

export const DEFAULT_TRAFFIC_LIMIT = 500;
export const MAX_TRAFFIC_LIMIT = 10_000;

const FILTER_NAMES = ['sender', 'skill', 'verdict', 'status', 'text'] as const;
const DIRECTIONS: readonly string[] = ['in', 'out'];
const PROTOCOLS: readonly string[] = ['samvad', 'a2a'];
const VERDICTS: readonly string[] = ['accepted', 'refused', ...PIPELINE_STEPS];
const STATUS = /^[1-5](\d\d|xx)$/i;

/** `?direction=&protocol=&sender=&skill=&verdict=&status=&text=&limit=` checked once; empty values mean "any". */
export function parseTrafficQuery(params: URLSearchParams): { filter: TrafficFilter; limit: number } {
  const filter: TrafficFilter = {};
  for (const name of FILTER_NAMES) {
    const value = params.get(name)?.trim();
    if (value) filter[name] = value;
  }
  const problems: FieldProblem[] = [];
  const direction = params.get('direction')?.trim();
  if (direction && DIRECTIONS.includes(direction)) filter.direction = direction as 'in' | 'out';
  else if (direction) problems.push({ field: 'direction', message: 'direction: must be in or out' });
  const protocol = params.get('protocol')?.trim();
  if (protocol && PROTOCOLS.includes(protocol)) filter.protocol = protocol as 'samvad' | 'a2a';
  else if (protocol) problems.push({ field: 'protocol', message: 'protocol: must be samvad or a2a' });
  if (filter.verdict !== undefined && !VERDICTS.includes(filter.verdict))
    problems.push({ field: 'verdict', message: `verdict: must be one of ${VERDICTS.join(', ')}` });
  if (filter.status !== undefined && !STATUS.test(filter.status))
    problems.push({
      field: 'status',
      message: 'status: must be an HTTP status like 401, or a class like 4xx',
    });
  const rawLimit = params.get('limit')?.trim() || String(DEFAULT_TRAFFIC_LIMIT);
  const limit = Number(rawLimit);
  if (!/^\d+$/.test(rawLimit) || limit < 1)
    problems.push({
      field: 'limit',
      message: `limit: must be a whole number from 1 to ${MAX_TRAFFIC_LIMIT}`,
    });
  if (problems.length > 0) {
    throw new ConsoleError(
      400,
      'Invalid traffic filter.',
      'Correct the fields listed and ask again.',
      problems,
    );
  }
  // More than the log can hold is the same as everything: clamp rather than refuse.
  return { filter, limit: Math.min(limit, MAX_TRAFFIC_LIMIT) };
}

/** A predicate for TrafficFilter (already validated): every given filter must match. */
export function compileFilter(filter: TrafficFilter): (entry: TrafficEntry) => boolean {
  const tests: ((entry: TrafficEntry) => boolean)[] = [];
  const { direction, protocol, sender, skill, verdict, status, text } = filter;
  // Entries from before directions existed are calls in.
  if (direction === 'out') tests.push((e) => e.direction === 'out');
  else if (direction === 'in') tests.push((e) => e.direction !== 'out');
  // Entries from before protocols existed are SAMVAD calls.
  if (protocol) tests.push((e) => (e.protocol ?? 'samvad') === protocol);
  if (sender) tests.push((e) => e.sender?.toLowerCase().includes(sender.toLowerCase()) ?? false);
  if (skill) tests.push((e) => e.skill === skill);
  if (verdict === 'refused') tests.push((e) => e.verdict !== 'accepted');
  else if (verdict) tests.push((e) => e.verdict === verdict);
  if (status && /xx$/i.test(status)) tests.push((e) => Math.floor(e.status / 100) === Number(status[0]));
  else if (status) tests.push((e) => e.status === Number(status));
  if (text) {
    const needle = text.toLowerCase();
    tests.push((e) =>
      [e.sender, e.callee, e.skill, e.code, e.message, e.traceId, e.diagnosis].some((field) =>
        field?.toLowerCase().includes(needle),
      ),
    );
  }
  return (entry) => tests.every((test) => test(entry));
}
