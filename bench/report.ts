// The printed table: every measurement, and each target beside its measurement with PASS or MISS.
import { MAX_AGE_MS } from '../src/agent/pipeline.js';
import type { LoadResult } from './load.js';
import { relativeSpeeds, type CoreSpeeds } from './core-speed.js';
import type { Anchored, Measured } from './measure.js';
import type { ConsoleArm, ConsoleLoadFailure, ConsoleLoadResult } from './measure-console.js';
import type { McpFailure, McpResult } from './measure-mcp.js';
import { LONG_FRAME_MS, type UiOutcome } from './measure-ui.js';
import type { RestartTrial, TunnelFailure, TunnelResult } from './measure-tunnel.js';
import type { BenchResults } from './suite.js';
import { median } from './stats.js';

export const TARGETS = {
  /** Signed throughput as a share of the plain node:http echo ceiling, c=32, alternating runs. */
  minEchoRatio: 0.45,
  /** A2A blocking sends as a share of the minimal A2A SDK server's, alternating runs, by concurrency. */
  minA2AAnchorRatio: { 32: 1.0, 1: 0.9 } as Record<number, number>,
  /** 5a: over 100,000 A2A sends, the rss after the first tenth may grow by at most this share of it. */
  maxA2ARssGrowth: 0.05,
  /** The same with shared state on Redis on loopback (one round trip more per call). */
  minRedisEchoRatio: 0.3,
  /** p50 at c=1 through the agent minus p50 of the gateway called directly, ms. */
  maxAddedLatencyMs: 1,
  /** p50 of the gateway-delta to caller-chunk delay, ms. */
  maxStreamP50Ms: 5,
  /** Resident memory of the agent process, bytes (issue 16: back under 140 MB, as before MCP, Redis, metrics); 5 and 5a. */
  maxRssBytes: 140 * 1024 * 1024,
  /** Answers other than 200 to well-behaved signed calls at c=32 and c=64 (a whole body waits its turn). */
  maxNon200: 0,
  /** p50 at c=1 through the loopback tunnel minus p50 of the same agent called directly, ms. */
  maxTunnelOverheadMs: 2,
  /** A restarted tunnel server: back online and the card reachable within the scheduled backoff plus this, ms. */
  reconnectSlackMs: 2000,
  /** Signed throughput with console clients streaming, as a share of the same agent's with none. */
  minConsoleRatio: 0.9,
  /** Row elements the Traffic page keeps in the DOM with 10,000 entries (a virtualised window). */
  maxUiRows: 200,
  /** 95th percentile of the frame times while the 10,000-row list scrolls, ms. */
  maxFrameP95Ms: 50,
  /** p50 of samvad_call through the MCP server minus p50 of the same call made with the client, ms. */
  maxMcpOverheadMs: 2,
};

/** How long the agent remembers a nonce: the envelope's timestamp plus the window plus 1 s. */
const NONCE_LIFETIME_S = (MAX_AGE_MS + 1000) / 1000;

export interface Row {
  label: string;
  result: string;
  target?: string;
  pass?: boolean;
}

export function buildRows(r: BenchResults): Row[] {
  const t = TARGETS;
  const ratioC1 = r.signed.c1.rps / r.echo.c1.rps;
  const ratioC32 = r.signed.c32.rps / r.echo.c32.rps;
  const single = (label: string, ratio: number): Row => ({
    label,
    result: `${pct(ratio)} (single runs, minutes apart)`,
  });
  const added = r.signed.c1.p50 - r.direct.p50;
  const handled = r.signed.c1.server.handled;
  const m = r.memory;
  const rss = Math.max(m.afterRun.rss, m.afterRun.peakRss ?? 0);
  const steadyNonces = m.load.rps * NONCE_LIFETIME_S;
  return [
    { label: '1. Signed chat via agent, c=1', result: load(r.signed.c1) },
    { label: '1. Signed chat via agent, c=32', result: load(r.signed.c32) },
    { label: '1. Signed chat via agent, c=64', result: load(r.signed.c64) },
    non200Row(r.signed.c32, r.signed.c64),
    {
      label: '   client: build + sign one request',
      result:
        `${us(r.signing.requestUs)} (digest + Ed25519 ${us(r.signing.signUs)}), ` +
        `${pct(r.signing.requestUs / 1000 / r.signed.c1.p50)} of a c=1 round trip; not in the latencies`,
    },
    ...a2aRows(r),
    { label: '2. Plain node:http JSON echo (ceiling), c=1', result: load(r.echo.c1) },
    { label: '2. Plain node:http JSON echo (ceiling), c=32', result: load(r.echo.c32) },
    single('2. Signed / echo req/s, c=1', ratioC1),
    single('2. Signed / echo req/s, c=32', ratioC32),
    ...r.echoAnchored.map((a) =>
      anchoredRow(
        `2. Signed / echo, alternating runs, c=${a.concurrency}`,
        a,
        'echo',
        a.concurrency === 32 ? TARGETS.minEchoRatio : undefined,
        r.machine.coresAtStart,
      ),
    ),
    ...redisRows(r),
    { label: '3. Gateway called directly, c=1', result: load(r.direct) },
    {
      label: '3. Bridge added latency (p50, c=1)',
      result: `${ms(added)} (${ms(r.signed.c1.p50)} - ${ms(r.direct.p50)})`,
      target: `< ${ms(t.maxAddedLatencyMs)}`,
      pass: added < t.maxAddedLatencyMs,
    },
    {
      label: '   of it inside handleEnvelope, c=1',
      result: handled
        ? `p50 ${ms(handled.p50)}, p99 ${ms(handled.p99)} (from body read to reply queued; gateway call included)`
        : 'n/a',
    },
    {
      label: '4. Stream: gateway delta -> caller chunk',
      result:
        `p50 ${ms(r.stream.p50)}, p99 ${ms(r.stream.p99)}, max ${ms(r.stream.max)} ` +
        `(${r.stream.count}/${r.stream.expectedDeltas} deltas; ${r.stream.completed}/${r.stream.streams} streams ended signed)`,
      target: `p50 < ${ms(t.maxStreamP50Ms)}`,
      pass:
        r.stream.p50 < t.maxStreamP50Ms &&
        r.stream.count === r.stream.expectedDeltas &&
        r.stream.completed === r.stream.streams,
    },
    {
      label: `5. ${(m.load.ok + m.load.errors).toLocaleString('en')} signed calls, c=${m.load.concurrency}`,
      result: `${load(m.load)}; agent CPU ${us(m.cpuUsPerCall)}/call`,
    },
    {
      label: '5. Agent process rss (peak)',
      result:
        `${mb(rss)} (warm ${mb(m.baseline.rss)}; after run+GC ${mb(m.afterRun.rss)}, ` +
        `anon ${mb(m.afterRun.anonRss ?? NaN)}; after sweep+GC ${mb(m.afterSweep.rss)})`,
      target: `< ${mb(t.maxRssBytes)}`,
      pass: rss < t.maxRssBytes && m.load.errors === 0,
    },
    ...a2aMemoryRows(r),
    {
      label: '   rss at rest, after a GC',
      result:
        `agent ${mb(r.idle.agent.rss)}, echo ${mb(r.idle.echo.rss)}, ` +
        `node alone ${mb(r.idle.runtime.rss)} [anon ${mb(r.idle.runtime.anonRss ?? NaN)}]`,
    },
    {
      label: '5. Nonce store: before / after sweep',
      result:
        `${count(m.afterRun.nonces)} -> ${count(m.afterSweep.nonces)} pairs; ` +
        `log ${mb(m.afterRun.nonceLogBytes ?? 0)} -> ${mb(m.afterSweep.nonceLogBytes ?? 0)}; ` +
        `heap+buffers ${mb(m.afterRun.heapUsed + m.afterRun.arrayBuffers)} -> ` +
        `${mb(m.afterSweep.heapUsed + m.afterSweep.arrayBuffers)} (${Math.round(m.heapBytesPerNonce)} B/pair)`,
      target: 'empties',
      pass: m.afterSweep.nonces === 0 && (m.afterRun.nonces ?? 0) >= m.load.ok,
    },
    {
      label: '   nonces held at this rate (projection)',
      result:
        `${Math.round(m.load.rps).toLocaleString('en')} req/s for ${NONCE_LIFETIME_S} s: ` +
        `~${count(Math.round(steadyNonces))} pairs, ~${mb(steadyNonces * m.heapBytesPerNonce)} memory`,
    },
    ...tunnelRows(r.tunnel),
    ...consoleRows(r.console, r.signed),
    ...mcpRows(r.mcp),
    ...uiRows(r.ui),
  ];
}

/** 1a. A2A against signed SAMVAD in the same run: agent CPU per call, and SAMVAD before and after. */
function a2aRows(r: BenchResults): Row[] {
  const { c1, c32, stream, signedBefore, signedAfter } = r.a2a;
  const cpu = (m: Measured) => m.server.cpuUsPerCall;
  const cpuRatio = cpu(c32) / cpu(r.signed.c32);
  const middle = (runs: Measured[]) => median(runs.map((m) => m.rps));
  const samvadRatio = middle(signedAfter) / middle(signedBefore);
  const rpsRuns = (runs: Measured[]) =>
    runs.map((m) => Math.round(m.rps).toLocaleString('en-US')).join(' / ');
  return [
    { label: '1a. A2A blocking send, c=1', result: load(c1) },
    { label: '1a. A2A blocking send, c=32', result: load(c32) },
    non200Row(c1, c32),
    {
      label: '1a. Agent CPU per call, A2A / signed SAMVAD (c=32)',
      result: `${us(cpu(c32))} / ${us(cpu(r.signed.c32))} = ${cpuRatio.toFixed(2)} (single runs, minutes apart)`,
    },
    ...r.a2a.paired.map((p) => {
      const ratio = p.a2aUs / p.signedUs;
      const runs = (values: number[]) => values.map((v) => v.toFixed(0)).join(' / ');
      return {
        label: `1a. Same, alternating runs, c=${p.concurrency}`,
        result:
          `${us(p.a2aUs)} / ${us(p.signedUs)} = ${ratio.toFixed(2)} ` +
          `(A2A runs ${runs(p.a2aRuns)} us; signed ${runs(p.signedRuns)} us; ` +
          `main-thread GC pauses ${us(p.a2aGcUs)} / ${us(p.signedGcUs)} a call)`,
        target: '<= 1.00',
        pass: ratio <= 1,
      };
    }),
    ...r.a2a.anchored.map((a) =>
      anchoredRow(
        `1a. A2A send / minimal A2A SDK server, c=${a.concurrency}`,
        a,
        'SDK server',
        TARGETS.minA2AAnchorRatio[a.concurrency],
        r.machine.coresAtStart,
      ),
    ),
    {
      label: '1a. A2A stream: gateway delta -> caller artifact update',
      result:
        `p50 ${ms(stream.p50)}, p99 ${ms(stream.p99)}, max ${ms(stream.max)} ` +
        `(${stream.count}/${stream.expectedDeltas} deltas; ${stream.completed}/${stream.streams} streams completed)`,
      target: `p50 < ${ms(TARGETS.maxStreamP50Ms)}`,
      pass:
        stream.p50 < TARGETS.maxStreamP50Ms &&
        stream.count === stream.expectedDeltas &&
        stream.completed === stream.streams,
    },
    {
      label: '1a. Signed chat c=32 after the A2A runs / before',
      result: `median req/s of 3 runs each side: ${samvadRatio.toFixed(2)} (before ${rpsRuns(signedBefore)}; after ${rpsRuns(signedAfter)}; non-200 ${[...signedBefore, ...signedAfter].reduce((sum, m) => sum + m.errors, 0)})`,
      target: '>= 0.90',
      pass: samvadRatio >= 0.9,
    },
  ];
}

function mcpRows(m: McpResult | McpFailure): Row[] {
  if (!('overheadMs' in m)) {
    return [{ label: '8. MCP samvad_call overhead', result: `not measured: ${m.error}`, pass: false }];
  }
  const errors = m.errors > 0 ? `, ${m.errors} errors: ${m.firstError ?? ''}` : '';
  return [
    {
      label: '8. Outbound call, client directly, c=1',
      result: `p50 ${ms(m.direct.p50)}, p99 ${ms(m.direct.p99)} (${m.direct.count} calls)`,
    },
    {
      label: '8. The same via MCP samvad_call, c=1',
      result: `p50 ${ms(m.mcp.p50)}, p99 ${ms(m.mcp.p99)} (${m.mcp.count} calls)${errors}`,
    },
    {
      label: '8. MCP added latency (p50, c=1)',
      result: `${ms(m.overheadMs)} (${ms(m.mcp.p50)} - ${ms(m.direct.p50)})`,
      target: `< ${ms(TARGETS.maxMcpOverheadMs)}`,
      pass: m.overheadMs < TARGETS.maxMcpOverheadMs && m.errors === 0,
    },
  ];
}

function consoleRows(c: ConsoleLoadResult | ConsoleLoadFailure, noConsole: BenchResults['signed']): Row[] {
  if ('error' in c) {
    return [{ label: '7. Console', result: `not measured: ${c.error}`, target: 'measured', pass: false }];
  }
  const rows: Row[] = [];
  for (const { concurrency: n, without, with: streaming } of c.points) {
    rows.push(
      { label: `7. Console open, no client, c=${n}`, result: arm(without) },
      { label: `7. Console open, ${c.clients} clients on /api/events, c=${n}`, result: arm(streaming) },
    );
  }
  for (const { concurrency: n, without, with: streaming, delivery: d } of c.points) {
    const ratio = streaming.rps / without.rps;
    const reference = n === 1 ? noConsole.c1 : n === 32 ? noConsole.c32 : undefined;
    const delivered =
      `events ${count(d.events)} = ${pct(d.events / (d.requests * c.clients))} of ` +
      `${count(d.requests)} requests x ${c.clients} clients` +
      (d.endedEarly > 0 ? `, ${d.endedEarly} stream(s) cut off` : '');
    rows.push({
      label: `7. With clients / without, req/s, c=${n}`,
      result:
        `${pct(ratio)}; ${delivered}; server CPU/call ${signed(streaming.serverCpuUsPerCall - without.serverCpuUsPerCall, us)}` +
        (reference
          ? ` (1., no console at all: ${Math.round(reference.rps).toLocaleString('en')} req/s)`
          : ''),
      target: `>= ${pct(TARGETS.minConsoleRatio)}`,
      pass:
        ratio >= TARGETS.minConsoleRatio &&
        d.minShare >= 1 &&
        d.endedEarly === 0 &&
        without.errors + streaming.errors === 0,
    });
  }
  return rows;
}

function uiRows(ui: UiOutcome): Row[] {
  if ('skipped' in ui) return [{ label: '7. Console UI in Chromium', result: `skipped: ${ui.skipped}` }];
  if ('error' in ui) {
    return [
      {
        label: '7. Console UI in Chromium',
        result: `not measured: ${ui.error}`,
        target: 'measured',
        pass: false,
      },
    ];
  }
  const entries = count(ui.entries);
  const f = ui.filter;
  const s = ui.scroll;
  return [
    {
      label: `7. UI: Traffic with ${entries} entries, first frame`,
      result:
        `reload ${ms(ui.coldMs)} from navigation start (fetch, parse, render); ` +
        `tab switch ${ms(ui.switchMs)}; Chromium ${ui.chromium}` +
        (ui.builtMs === undefined ? '' : `; UI built first in ${sec(ui.builtMs)}`),
    },
    {
      label: '7. UI: row elements in the DOM',
      result: `${ui.rows} after load, at most ${ui.maxRowsScrolling} while scrolling (list holds ${count(ui.shownEntries)})`,
      target: `< ${TARGETS.maxUiRows}`,
      pass:
        ui.rows < TARGETS.maxUiRows &&
        ui.maxRowsScrolling < TARGETS.maxUiRows &&
        ui.shownEntries === ui.entries,
    },
    {
      label: `7. UI: scroll all ${entries} rows in ${sec(s.durationMs)}`,
      result:
        `${s.frames} frames: p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, max ${ms(s.max)}; ` +
        `${pct(s.longShare)} over ${LONG_FRAME_MS} ms; ${(s.distancePx / 1000).toFixed(0)}k px, ` +
        (s.reachedEnd ? 'last row shown at the end' : 'the last row was NOT shown at the end'),
      target: `p95 < ${ms(TARGETS.maxFrameP95Ms)}`,
      pass: s.p95 < TARGETS.maxFrameP95Ms && s.reachedEnd,
    },
    {
      label: `7. UI: search filter over ${entries} rows`,
      result:
        `"${f.text}" -> ${count(f.matches)} rows: count shown ${ms(median(f.applyMs))} after the input` +
        ` (max ${ms(Math.max(...f.applyMs))}); cleared: ${ms(median(f.clearMs))} (max ${ms(Math.max(...f.clearMs))})` +
        (f.applyMs.length > 1 ? `; median of ${f.applyMs.length}` : ''),
    },
  ];
}

function arm(a: ConsoleArm): string {
  const errors = `; non-200 ${count(a.errors)}`;
  return (
    `${Math.round(a.rps).toLocaleString('en')} req/s, p50 ${ms(a.p50)}, p99 ${ms(a.p99)}; ` +
    `CPU/call server ${us(a.serverCpuUsPerCall)}, client ${us(a.clientCpuUsPerCall)}; ` +
    `runs ${a.runRps.map((rps) => Math.round(rps).toLocaleString('en')).join(' / ')}${errors}`
  );
}

function tunnelRows(t: TunnelResult | TunnelFailure): Row[] {
  if ('error' in t) {
    return [{ label: '6. Tunnel', result: `not measured: ${t.error}`, target: 'measured', pass: false }];
  }
  const rows: Row[] = [];
  for (const { concurrency: c, direct, tunnel } of t.points) {
    rows.push(
      { label: `6. Tunnelled agent called directly, c=${c}`, result: load(direct) },
      { label: `6. Same agent through the tunnel, c=${c}`, result: load(tunnel) },
    );
  }
  for (const { concurrency: c, direct, tunnel } of t.points) {
    const overhead = tunnel.p50 - direct.p50;
    const row: Row = {
      label: `6. Tunnel overhead (p50, c=${c})`,
      result:
        `${ms(overhead)} (${ms(tunnel.p50)} - ${ms(direct.p50)}); p99 ${signed(tunnel.p99 - direct.p99)}; ` +
        `req/s ${pct(tunnel.rps / direct.rps)} of direct` +
        (c === 1 ? '' : ' (closed loop: p50 = queue, the CPU cost shows here)'),
    };
    // The target is a latency one: at c=1 no request waits behind another, so p50 is the tunnel's own.
    if (c === 1) {
      row.target = `< ${ms(TARGETS.maxTunnelOverheadMs)}`;
      row.pass = overhead < TARGETS.maxTunnelOverheadMs && direct.errors + tunnel.errors === 0;
    }
    rows.push(row);
  }
  t.restarts.forEach((trial, i) => rows.push(restartRow(i + 1, t.downMs, trial)));
  return rows;
}

function restartRow(n: number, downMs: number, trial: RestartTrial): Row {
  const delay = trial.scheduledDelayMs;
  const budget = delay === undefined ? undefined : delay + TARGETS.reconnectSlackMs;
  const online = trial.onlineMs === undefined ? 'not online' : `online ${sec(trial.onlineMs)}`;
  const card = trial.cardMs === undefined ? 'card unreachable' : `card ${sec(trial.cardMs)}`;
  // The wait the backoff still had when the server came back, then the reconnect itself.
  const waited = Math.max(0, trial.leftAtStartMs ?? 0);
  const backoff =
    delay === undefined
      ? 'no backoff seen'
      : `waited ${sec(waited)} of a ${sec(delay)} backoff (attempt ${trial.scheduledAttempt ?? '?'})` +
        (trial.onlineMs === undefined ? '' : `, connected in ${ms(trial.onlineMs - waited)}`);
  const error = trial.error ? `; ${trial.error}` : '';
  const slowest = Math.max(trial.onlineMs ?? Infinity, trial.cardMs ?? Infinity);
  return {
    label: `6. Tunnel server down ${downMs / 1000} s, restart ${n}`,
    result: `${online}, ${card} after start(): ${backoff}${error}`,
    target:
      budget === undefined
        ? 'backoff + 2 s'
        : `< ${sec(budget)} (backoff + ${TARGETS.reconnectSlackMs / 1000} s)`,
    pass: trial.error === undefined && budget !== undefined && slowest < budget,
  };
}

export function formatReport(r: BenchResults): string {
  const rows = buildRows(r);
  const header: Row = { label: 'Measurement', result: 'Result', target: 'Target' };
  const all = [header, ...rows];
  const widths = [
    Math.max(...all.map((row) => row.label.length)),
    Math.max(...all.map((row) => row.result.length)),
    Math.max(...all.map((row) => (row.target ?? '').length)),
  ] as const;
  const line = (row: Row, verdict: string) =>
    [row.label.padEnd(widths[0]), row.result.padEnd(widths[1]), (row.target ?? '').padEnd(widths[2]), verdict]
      .join('  ')
      .trimEnd();
  const rule = `${widths.map((w) => '-'.repeat(w)).join('  ')}  -------`;
  const verdict = (row: Row) => (row.pass === undefined ? '' : row.pass ? 'PASS' : 'MISS');
  const { machine, config } = r;
  const title =
    `Agent Bridge bench (${config.name}: ${config.durationMs / 1000} s per point after ` +
    `${config.warmupMs / 1000} s warm-up) on node ${machine.node}, ${machine.cpus} x ${machine.cpuModel}`;
  const tunnelLoads = 'points' in r.tunnel ? r.tunnel.points.flatMap((p) => [p.direct, p.tunnel]) : [];
  const consoleLoads = 'points' in r.console ? r.console.points.flatMap((p) => [p.without, p.with]) : [];
  const loads = [
    r.signed.c1,
    r.signed.c32,
    r.signed.c64,
    r.echo.c1,
    r.echo.c32,
    r.direct,
    r.memory.load,
    r.a2a.c1,
    r.a2a.c32,
    ...tunnelLoads,
    ...consoleLoads,
  ];
  const errors = loads
    .filter((l) => l.errors > 0)
    .map((l) => `! ${l.errors} failed requests at c=${l.concurrency}: ${l.firstError ?? ''}`);
  const pageErrors =
    'pageErrors' in r.ui ? r.ui.pageErrors.map((message) => `! 7. UI page error: ${message}`) : [];
  const misses = rows.filter((row) => row.pass === false).length;
  const busy =
    machine.busyBefore > 0.1
      ? [
          `! Other processes used ${pct(machine.busyBefore)} of the CPUs just before the run: expect skewed figures.`,
        ]
      : [];
  return [
    title,
    ...busy,
    'Client, agent, gateway and echo server each run in their own process' +
      (machine.pinned
        ? ` (agent and echo on CPU ${machine.pinned.server}, client and gateway on CPU ${machine.pinned.client}).`
        : ' (not pinned to CPUs).'),
    ...(machine.pinned && 'points' in r.tunnel
      ? [
          `6: a second agent (its localtunnel client inside) on CPU ${machine.pinned.server}; the loopback tunnel ` +
            `server (max ${r.tunnel.maxConnCount} tunnel sockets) in its own process on CPU ${machine.pinned.client}.`,
        ]
      : []),
    'CPU/call: CPU time (user + system, all threads) of the server process and of the client process per call' +
      ' (6: and of the tunnel server).',
    ...('points' in r.console
      ? [
          `7: a third agent process running its console${machine.pinned ? ` (CPU ${machine.pinned.server})` : ''}; ` +
            `runs of ${r.console.runMs / 1000} s alternate without / with ${r.console.clients} console clients ` +
            `(this process, reading /api/events) as A B B A x ${r.console.blocks}; req/s pooled per side, ` +
            'p50/p99 the median of its runs.',
        ]
      : []),
    ...('entries' in r.ui
      ? [
          '7. UI: the built UI against the mock console (renderer/dev/mock-console.ts), in Chromium, unpinned.',
        ]
      : []),
    '',
    line(header, 'Verdict'),
    rule,
    ...rows.map((row) => line(row, verdict(row))),
    '',
    ...errors,
    ...pageErrors,
    misses === 0 ? 'All targets met.' : `${misses} target(s) missed.`,
  ].join('\n');
}

export function missedTargets(r: BenchResults): number {
  return buildRows(r).filter((row) => row.pass === false).length;
}

function redisRows(r: BenchResults): Row[] {
  if ('error' in r.redis)
    return [{ label: '1r. Signed chat, state on Redis, c=32', result: `not measured: ${r.redis.error}` }];
  const ratio = r.redis.c32.rps / r.echo.c32.rps;
  return [
    {
      label: '1r. Signed chat, state on Redis, c=32',
      result: `${load(r.redis.c32)}; redis-server ${us(r.redis.redisCpuUsPerCall)}/call`,
    },
    {
      label: '1r. Signed (Redis) / echo req/s, c=32',
      result: pct(ratio),
      target: `>= ${pct(TARGETS.minRedisEchoRatio)}`,
      pass: ratio >= TARGETS.minRedisEchoRatio,
    },
  ];
}

/** Well-behaved callers under load are served, never refused: every answer that is not a 200, counted. */
function non200Row(...loads: LoadResult[]): Row {
  const sent = (l: LoadResult) => l.ok + l.errors;
  return {
    label: `1. Non-200 answers, ${loads.map((l) => `c=${l.concurrency}`).join(' / ')}`,
    result: loads.map((l) => `${count(l.errors)} of ${count(sent(l))}${breakdown(l)}`).join(' / '),
    target: `${TARGETS.maxNon200}`,
    pass: loads.every((l) => l.errors <= TARGETS.maxNon200),
  };
}

/** `(503 x 44, none x 1)`: the statuses other than the expected one (`none`: no answer at all). */
function breakdown(l: LoadResult): string {
  const parts = Object.entries(l.statuses).map(([status, n]) => `${status} x ${count(n)}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/**
 * Ours against an anchor in alternating runs: each side's median req/s and server CPU per call, the ratio
 * of req/s (the row's figure, with its target if any) and of CPU per call, each run, and non-200 answers.
 */
function anchoredRow(
  label: string,
  a: Anchored,
  anchorName: string,
  target: number | undefined,
  coresAtStart: CoreSpeeds | undefined,
): Row {
  const runs = (values: number[]) => values.map((v) => Math.round(v).toLocaleString('en')).join(' / ');
  const row: Row = {
    label,
    result:
      `${a.ratio.toFixed(2)}: ours ${count(Math.round(a.ours.medianRps))} req/s, ${us(a.ours.medianCpuUs)} CPU/call; ` +
      `${anchorName} ${count(Math.round(a.anchor.medianRps))} req/s, ${us(a.anchor.medianCpuUs)} CPU/call ` +
      `(CPU ratio ${a.cpuRatio.toFixed(2)}; req/s runs ours ${runs(a.ours.rps)}, ${anchorName} ${runs(a.anchor.rps)}; ` +
      `non-200 ${a.ours.errors} / ${a.anchor.errors})` +
      coresNote(a.cores, coresAtStart),
  };
  if (target !== undefined) {
    row.target = `>= ${target.toFixed(2)}`;
    row.pass = a.ratio >= target && a.ours.errors === 0;
  }
  return row;
}

/** A gap between the two cores' relative speeds beyond which an anchored row is flagged. */
const UNEVEN_CORES = 0.15;

/**
 * How fast each pinned core ran during an anchored row, against the start of the bench (core-speed.ts). Our
 * side is bound by the server's core and the anchor by the client's, so a gap between the two moves the
 * ratio by about as much; the row says so rather than leave a neighbour's work to be read as ours.
 */
function coresNote(probes: CoreSpeeds[] | undefined, coresAtStart: CoreSpeeds | undefined): string {
  if (!probes?.length || !coresAtStart) return '';
  const { server, client } = relativeSpeeds(probes, coresAtStart);
  const note = `; core speed vs the start: server ${pct(server)}, client ${pct(client)}`;
  return Math.abs(server - client) > UNEVEN_CORES
    ? `${note} (unevenly slowed by other work on the machine: the ratio leans toward the faster core's side)`
    : note;
}

/** 5a. A2A sends to a fresh agent process: its rss along the run, its peak, and its growth after the first tenth. */
function a2aMemoryRows(r: BenchResults): Row[] {
  const m = r.a2aMemory;
  const first = m.points[0];
  const last = m.points.at(-1);
  if (!first || !last) return [{ label: '5a. A2A sends, memory', result: 'no points', pass: false }];
  const growth = (last.rss - first.rss) / first.rss;
  const along = m.points
    .map((p) => `${Math.round(p.calls / 1000)}k ${(p.rss / 1048576).toFixed(0)}`)
    .join(', ');
  return [
    {
      label: `5a. ${count(m.requests)} A2A sends, c=${m.concurrency}`,
      result: `${count(Math.round(m.rps))} req/s; agent CPU ${us(m.cpuUsPerCall)}/call; non-200 ${count(m.errors)}`,
    },
    {
      label: '5a. Agent process rss (peak)',
      result:
        `${mb(m.peakRss)} over the calls (since start, warm-up included: ${mb(m.peakSinceStart)}); ` +
        `warm ${mb(m.baseline.rss)}; rss MB along the run: ${along}`,
      target: `< ${mb(TARGETS.maxRssBytes)}`,
      pass: m.peakRss < TARGETS.maxRssBytes && m.errors === 0,
    },
    {
      label: `5a. rss growth after the first ${count(first.calls)} calls`,
      result: `${signed(growth * 100, (v) => `${v.toFixed(1)}%`)} (${mb(first.rss)} -> ${mb(last.rss)})`,
      target: `<= +${pct(TARGETS.maxA2ARssGrowth)}`,
      pass: growth <= TARGETS.maxA2ARssGrowth,
    },
  ];
}

function load(l: LoadResult | Measured): string {
  const errors = `; non-200 ${count(l.errors)}${breakdown(l)}`;
  const relay =
    'relayCpuUsPerCall' in l && l.relayCpuUsPerCall !== undefined
      ? `, tunnel server ${us(l.relayCpuUsPerCall)}`
      : '';
  const cpu =
    'server' in l
      ? `; CPU/call server ${us(l.server.cpuUsPerCall)}${relay}, client ${us(l.clientCpuUsPerCall)}`
      : '';
  return `${Math.round(l.rps).toLocaleString('en')} req/s, p50 ${ms(l.p50)}, p99 ${ms(l.p99)}${cpu}${errors}`;
}

function ms(value: number): string {
  return `${value.toFixed(Math.abs(value) < 10 ? 2 : 1)} ms`;
}

function sec(valueMs: number): string {
  return `${(valueMs / 1000).toFixed(2)} s`;
}

function signed(value: number, unit: (value: number) => string = ms): string {
  return `${value >= 0 ? '+' : '-'}${unit(Math.abs(value))}`;
}

function us(value: number): string {
  return `${Math.round(value).toLocaleString('en')} us`;
}

function pct(value: number): string {
  return `${Math.round(value * 100)}%`;
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function count(value: number | undefined): string {
  return value === undefined ? '?' : value.toLocaleString('en');
}
