import { useNow } from '../hooks/useNow';
import { formatDuration, secondsUntil } from '../lib/format';

interface CountdownProps {
  /** ISO time or epoch milliseconds. */
  to: string | number;
  /** Shown when the time has come. */
  doneText?: string;
}

/** "in 12 s", ticking every second, then `doneText`. */
export function Countdown({ to, doneText = 'now' }: CountdownProps) {
  const now = useNow(1000);
  const left = secondsUntil(to, now);
  const text = left === null ? '—' : left === 0 ? doneText : `in ${formatDuration(left)}`;
  return (
    <time className="countdown" data-testid="countdown" dateTime={new Date(to).toISOString()}>
      {text}
    </time>
  );
}
