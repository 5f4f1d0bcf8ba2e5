import type { TrafficMinute } from '../api/contract';
import { formatTime } from '../lib/format';

const WIDTH = 300;
const HEIGHT = 80;
const GAP = 2;

/** Calls to this agent per minute (accepted below, refused stacked on top), oldest on the left. */
export function TrafficChart({ minutes }: { minutes: TrafficMinute[] }) {
  const peak = Math.max(1, ...minutes.map((minute) => minute.accepted + minute.refused));
  const slot = WIDTH / Math.max(1, minutes.length);
  const accepted = minutes.reduce((sum, minute) => sum + minute.accepted, 0);
  const refused = minutes.reduce((sum, minute) => sum + minute.refused, 0);
  const scale = (count: number) => (count / peak) * (HEIGHT - 2);

  return (
    <figure className="chart" data-testid="traffic-chart">
      <div className="chart-plot">
        <span className="chart-peak" aria-hidden="true">
          {peak}/min
        </span>
        <svg
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={`Last ${minutes.length} minutes: ${accepted} accepted, ${refused} refused, at most ${peak} a minute`}
        >
          <line className="chart-base" x1="0" x2={WIDTH} y1={HEIGHT - 0.5} y2={HEIGHT - 0.5} />
          {minutes.map((minute, index) => {
            const okHeight = scale(minute.accepted);
            const badHeight = scale(minute.refused);
            const x = index * slot + GAP / 2;
            const width = Math.max(1, slot - GAP);
            return (
              <g key={minute.minute}>
                <title>{`${formatTime(minute.minute)}: ${minute.accepted} accepted, ${minute.refused} refused`}</title>
                <rect className="chart-hit" x={index * slot} y={0} width={slot} height={HEIGHT} />
                {okHeight > 0 ? (
                  <rect className="chart-ok" x={x} y={HEIGHT - okHeight} width={width} height={okHeight} />
                ) : null}
                {badHeight > 0 ? (
                  <rect
                    className="chart-bad"
                    x={x}
                    y={HEIGHT - okHeight - badHeight}
                    width={width}
                    height={badHeight}
                  />
                ) : null}
              </g>
            );
          })}
        </svg>
      </div>
      <figcaption className="chart-axis" aria-hidden="true">
        <span>{minutes.length > 0 ? formatTime(minutes[0]?.minute) : ''}</span>
        <span>now</span>
      </figcaption>
    </figure>
  );
}
