// `npx tsx bench/profile-summary.ts FILE.cpuprofile [N]`: the N functions with the most self time in a
// V8 CPU profile (as written by `npm run bench -- --profile DIR`), and the time per source package.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  name: string;
  selfMs: number;
  share: number;
}

export function summarizeProfile(profile: CpuProfile): {
  byFunction: ProfileLine[];
  byOrigin: ProfileLine[];
} {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const functions = new Map<string, number>();
  const origins = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame || frame.functionName === '(idle)') continue;
    busy += us;
    const file = shortUrl(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${file}${file ? `:${frame.lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    origins.set(origin(frame), (origins.get(origin(frame)) ?? 0) + us);
  }
  const lines = (map: Map<string, number>) =>
    [...map]
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: us / busy }))
      .sort((a, b) => b.selfMs - a.selfMs);
  return { byFunction: lines(functions), byOrigin: lines(origins) };
}

function shortUrl(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '~/')
    .replace(/^.*\/(src|test|bench)\//, '$1/');
}

function origin(frame: ProfileNode['callFrame']): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native / V8)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] ?? ''}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  const local = /\/(src|test|bench)\/([^/]+)/.exec(url);
  return local ? `${local[1]}/${local[2]}` : url;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: tsx bench/profile-summary.ts FILE.cpuprofile [N]');
  const top = Number(process.argv[3] ?? 25);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const { byFunction, byOrigin } = summarizeProfile(profile);
  const print = (title: string, lines: ProfileLine[]) => {
    console.log(`\n${title}`);
    for (const line of lines.slice(0, top)) {
      console.log(
        `${line.selfMs.toFixed(0).padStart(8)} ms ${(line.share * 100).toFixed(1).padStart(5)}%  ${line.name}`,
      );
    }
  };
  print('Self time by origin (busy time only):', byOrigin);
  print('Self time by function:', byFunction);
}
