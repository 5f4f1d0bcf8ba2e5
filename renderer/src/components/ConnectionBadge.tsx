import type { ConnectionState } from '../api/events';
import { Countdown } from './Countdown';

/** The live stream's state in the header: "Live", "Connecting…", or "Reconnecting, next try in 4 s". */
export function ConnectionBadge({ state }: { state: ConnectionState }) {
  return (
    <div
      className={`connection ${state.status}`}
      role="status"
      aria-live="polite"
      data-testid="connection-state"
      data-state={state.status}
    >
      <span className="dot" aria-hidden="true" />
      {state.status === 'live' ? 'Live' : null}
      {state.status === 'connecting' ? 'Connecting…' : null}
      {state.status === 'closed' ? 'Disconnected' : null}
      {state.status === 'reconnecting' ? (
        <span title={state.reason}>
          Reconnecting… next try <Countdown to={state.nextTryAt} />
        </span>
      ) : null}
    </div>
  );
}
