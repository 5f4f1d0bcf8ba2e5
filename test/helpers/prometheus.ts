// Prometheus text format, read back as samples, for tests that scrape /metrics.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The text format's samples (comments skipped), so tests compare exact values, not substrings. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`Not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with exactly these labels; undefined when there is none. */
export function value(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const same = (a: Record<string, string>) =>
    Object.keys(a).length === Object.keys(labels).length &&
    Object.entries(labels).every(([key, wanted]) => a[key] === wanted);
  const found = samples.filter((sample) => sample.name === name && same(sample.labels));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} appears ${found.length} times`);
  return found[0]?.value;
}

/** A family's non-zero samples as `label=value,...` -> value, to compare whole families at once. */
export function nonZero(samples: Sample[], name: string): Record<string, number> {
  return Object.fromEntries(
    samples
      .filter((sample) => sample.name === name && sample.value !== 0)
      .map((sample) => [
        Object.entries(sample.labels)
          .map(([key, label]) => `${key}=${label}`)
          .join(','),
        sample.value,
      ]),
  );
}
