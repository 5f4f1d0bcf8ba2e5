import {
  HEALTH_TITLES,
  healthFactsOf,
  healthSummary,
  type CheckState,
  type Health,
  type StatusResponse,
} from '../api/contract';
import { Badge, type Tone } from './Badge';

const TONES: Record<Health, Tone> = { online: 'ok', degraded: 'warn', offline: 'neutral', error: 'bad' };
const MARKS: Record<CheckState, string> = { ok: '✓', attention: '!', problem: '✕', unknown: '–' };
const SAID: Record<CheckState, string> = {
  ok: 'yes',
  attention: 'needs you',
  problem: 'no',
  unknown: 'not known',
};

/**
 * "Is it working?" in one line at the top of the Overview: the tray's own health and reason (the same
 * function), then each check that ran: reachable from outside, gateway answering, callers' agent
 * restricted, approvals waiting.
 */
export function HealthSummary({ status }: { status: StatusResponse }) {
  const { health, reason, checks } = healthSummary(healthFactsOf(status));
  return (
    <section
      className="health-summary"
      aria-label="Is it working?"
      data-testid="health-summary"
      data-health={health}
    >
      <p className="health-line" role="status">
        <Badge tone={TONES[health]}>{HEALTH_TITLES[health]}</Badge>
        <span className="health-reason">{reason}</span>
      </p>
      <ul className="health-checks">
        {checks.map((check) => (
          <li
            key={check.id}
            className={`health-check ${check.state}`}
            data-check={check.id}
            data-state={check.state}
          >
            <span className="health-mark" aria-hidden="true">
              {MARKS[check.state]}
            </span>
            {check.text}
            <span className="visually-hidden"> ({SAID[check.state]})</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
