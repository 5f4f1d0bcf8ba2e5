import { formatDateTime, formatRelative } from '../lib/format';

/** A time as "5 min ago" with the exact time beside it. */
export function When({ iso, now }: { iso: string; now: number }) {
  return (
    <time dateTime={iso}>
      {formatRelative(iso, now)} <span className="muted">({formatDateTime(iso)})</span>
    </time>
  );
}
