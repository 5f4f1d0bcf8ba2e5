/** Latency samples (milliseconds) summarised the way the report prints them. */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array; NaN when there are no samples. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** The middle value (the mean of the two middle ones for an even count); NaN when there are none. */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function summarize(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length ? total / sorted.length : NaN,
    max: sorted.length ? (sorted[sorted.length - 1] as number) : NaN,
  };
}

/** A growable array of doubles: a closed loop at tens of thousands of requests a second records each one. */
export class Samples {
  private data = new Float64Array(4096);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  values(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}
