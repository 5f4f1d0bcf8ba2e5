import { formatDateTime, formatRelative } from '../lib/format';

/**
 * A time as "5 min ago" with the exact time beside it. `past` for something that has happened: a few seconds
 * of clock skew between the console and this browser must not make it read "in less than a minute".
 */
export function When({ iso, now, past = false }: { iso: string; now: number; past?: boolean }) {
  return (
    <time dateTime={iso}>
      {formatRelative(iso, now, past ? 'past' : 'any')} <span className="muted">({formatDateTime(iso)})</span>
    </time>
  );
}
