/** Small formatters the pages share. Times are shown in the operator's own locale and time zone. */

export function formatTime(iso: string | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function formatDateTime(iso: string | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString([], {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** "4 s", "2 min 5 s", "1 h 3 min": a duration in whole seconds. */
export function formatDuration(totalSeconds: number): string {
  const seconds = Math.max(0, Math.round(totalSeconds));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** Seconds left until `iso` from `now` (never negative); null when `iso` is not a time. */
export function secondsUntil(iso: string | number, now: number): number | null {
  const at = typeof iso === 'number' ? iso : Date.parse(iso);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/**
 * "less than a minute ago", "5 min ago", "in 23 h", "3 d ago": a coarse distance from `now`, for times shown
 * beside the exact one. `past` for events that have happened (created, approved, revoked, last used): the
 * console's clock may run a few seconds ahead of the browser's, and such a time must never read as future.
 */
export function formatRelative(iso: string | undefined, now: number, tense: 'past' | 'any' = 'any'): string {
  if (!iso) return '—';
  const parsed = Date.parse(iso);
  if (Number.isNaN(parsed)) return iso;
  const at = tense === 'past' ? Math.min(parsed, now) : parsed;
  const seconds = Math.round((at - now) / 1000);
  const size = Math.abs(seconds);
  if (size < 45) return seconds <= 0 ? 'less than a minute ago' : 'in less than a minute';
  const minutes = Math.round(size / 60);
  const hours = Math.round(size / 3600);
  const amount =
    minutes < 60 ? `${minutes} min` : hours < 48 ? `${hours} h` : `${Math.round(size / 86_400)} d`;
  return seconds < 0 ? `${amount} ago` : `in ${amount}`;
}
