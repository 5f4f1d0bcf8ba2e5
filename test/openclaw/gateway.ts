/**
 * Runs a real OpenClaw gateway (the pinned package from scripts/openclaw/install.ts, under its Node 24)
 * on a free loopback port, in a throw-away HOME/state/config, with token auth and the OpenAI-compatible
 * chat endpoint on, and the stand-in model (model-server.ts) as its only model provider. Nothing touches
 * the real ~/.openclaw: HOME, OPENCLAW_HOME, OPENCLAW_STATE_DIR, OPENCLAW_CONFIG_PATH, TMPDIR and the
 * working directory all point into a fresh temp folder, and the environment is built from scratch.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import {
  CACHE_DIR,
  NODE_BIN,
  NODE_BIN_DIR,
  OPENCLAW_ENTRY,
  isInstalled,
} from '../../scripts/openclaw/paths.js';
import JSON5 from 'json5';
import { restrictedAgentSnippet } from '../../src/bridge/agent-snippet.js';
import { STANDIN_MODEL_ID } from './model-server.js';

export const PROVIDER_ID = 'standin';
/**
 * A second name for the stand-in model, which its catalog entry marks a preferred Code Mode performer
 * (`compat.codeMode: "preferred"`, as OpenClaw's own catalogs mark e.g. claude-opus-5 or gpt-5.5): with
 * `tools.codeMode` unset ("auto"), OpenClaw gives such a model Code Mode's `exec` and `wait`.
 */
export const STANDIN_CODEMODE_MODEL_ID = 'standin-codemode';

/** The tools that reach the operator's machine (GATEWAY.md); a public agent must be offered none. */
export const HOST_TOOLS = [
  'exec',
  'process',
  'read',
  'write',
  'edit',
  'apply_patch',
  'browser',
  'nodes',
  'canvas',
  'cron',
  'gateway',
] as const;

/** The restricted agent, exactly as GATEWAY.md's example (OpenClaw's own "public agent" shape). */
export const PUBLIC_AGENT = {
  workspace: '~/.openclaw/workspace-public',
  tools: {
    profile: 'minimal',
    deny: [
      'read',
      'write',
      'edit',
      'apply_patch',
      'exec',
      'process',
      'browser',
      'canvas',
      'nodes',
      'cron',
      'gateway',
      'image',
    ],
  },
};

/** The agent the bridge's console tells the operator to add (restrictedAgentSnippet), as it parses. */
export function snippetAgent(id: string): Record<string, unknown> {
  const config = JSON5.parse<{ agents: { entries: Record<string, Record<string, unknown>> } }>(
    restrictedAgentSnippet(id),
  );
  const entry = config.agents.entries[id];
  if (!entry) throw new Error(`restrictedAgentSnippet("${id}") has no entry for ${id}`);
  return entry;
}

/**
 * The agents besides `main` and `public` that the classifier is checked against: the security review's
 * messaging agent, the snippet's agent on the Code Mode model, and the same without its `codeMode: false`.
 */
export function reviewAgents(): Record<string, Record<string, unknown>> {
  const restricted = snippetAgent('restricted');
  const { codeMode: _dropped, ...withoutCodeModeOff } = restricted.tools as Record<string, unknown>;
  const onCodeModeModel = { model: { primary: `${PROVIDER_ID}/${STANDIN_CODEMODE_MODEL_ID}` } };
  return {
    messaging: { tools: { profile: 'messaging', deny: ['gateway'] } },
    restricted: { ...restricted, ...onCodeModeModel },
    codemode: {
      ...restricted,
      workspace: '~/.openclaw/workspace-codemode',
      tools: withoutCodeModeOff,
      ...onCodeModeModel,
    },
  };
}

export interface GatewayConfigInput {
  port: number;
  token: string;
  modelBaseUrl: string;
  fileLog: string;
}

/** The openclaw.json the harness writes (plain JSON; OpenClaw also reads JSON5). */
export function gatewayConfig(input: GatewayConfigInput): Record<string, unknown> {
  return {
    gateway: {
      mode: 'local',
      port: input.port,
      bind: 'loopback',
      auth: { mode: 'token', token: input.token },
      http: { endpoints: { chatCompletions: { enabled: true } } },
    },
    // No LAN multicast, no update or catalog requests: this machine reaches nothing but loopback.
    discovery: { mdns: { mode: 'off' } },
    update: { checkOnStart: false },
    logging: { file: input.fileLog },
    models: {
      mode: 'merge',
      catalogRefresh: { enabled: false },
      providers: {
        [PROVIDER_ID]: {
          baseUrl: input.modelBaseUrl,
          apiKey: 'standin-local',
          api: 'openai-completions',
          models: [
            {
              id: STANDIN_MODEL_ID,
              name: 'Stand-in model',
              reasoning: false,
              input: ['text'],
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              contextWindow: 128000,
              maxTokens: 4096,
            },
            {
              id: STANDIN_CODEMODE_MODEL_ID,
              name: 'Stand-in model (Code Mode preferred)',
              reasoning: false,
              input: ['text'],
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              contextWindow: 128000,
              maxTokens: 4096,
              compat: { codeMode: 'preferred' },
            },
          ],
        },
      },
    },
    // What local onboarding writes: every core tool, globally.
    tools: { profile: 'full' },
    agents: {
      defaults: { model: { primary: `${PROVIDER_ID}/${STANDIN_MODEL_ID}` } },
      entries: { main: {}, public: PUBLIC_AGENT, ...reviewAgents() },
    },
  };
}

/**
 * A stock local config, as onboarding leaves it: the gateway, the model, every tool (`tools.profile: "full"`)
 * and the implicit agent "main" in the default workspace; no roster.
 */
export function stockConfig(input: GatewayConfigInput): Record<string, unknown> {
  const config = gatewayConfig(input) as { agents: { defaults: Record<string, unknown> } };
  return {
    ...config,
    agents: { defaults: { ...config.agents.defaults, workspace: '~/.openclaw/workspace' } },
  };
}

export interface StartGatewayOptions {
  modelBaseUrl: string;
  /** How long to wait for `GET /health` (default 90 s; a cold start here takes about 10 s). */
  startTimeoutMs?: number;
  /** Keep the temp HOME after stop (also with AGENT_BRIDGE_OPENCLAW_KEEP=1). */
  keepTemp?: boolean;
  /** The config to write (default: gatewayConfig, the review roster). */
  config?: (input: GatewayConfigInput) => Record<string, unknown>;
  /** Reuse this port (a gateway restarted where the bridge expects it); default a free one. */
  port?: number;
  /** Reuse this token (with `port`: the same gateway, restarted). */
  token?: string;
  /** More environment for the gateway and its CLI (e.g. `CONTAINERS_CONF` for its sandbox's Podman). */
  env?: NodeJS.ProcessEnv;
}

export interface Gateway {
  url: string;
  port: number;
  token: string;
  home: string;
  stateDir: string;
  configPath: string;
  /** The gateway's stdout and stderr, kept under the cache folder after the run. */
  logFile: string;
  pid: number;
  /** Milliseconds from spawn to the first 200 from /health. */
  healthyAfterMs: number;
  /** Whether the process has exited. */
  exited(): boolean;
  /** The last lines of the captured log, for failure messages. */
  logTail(lines?: number): string;
  /** The whole captured log (colours removed). */
  log(): string;
  /** Kills the gateway (SIGKILL, as a crash), keeping its home, config and port for start(). */
  kill(): Promise<void>;
  /** Starts it again on the same home, port and token; resolves with the ms until /health answered. */
  start(): Promise<number>;
  /** Runs the `openclaw` CLI with the gateway's environment (its config, state and home), plus `env`. */
  cli(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult>;
  /** Runs a command line through a shell, `openclaw` on its PATH, as the operator pastes it. */
  shell(command: string): Promise<CliResult>;
  stop(): Promise<void>;
}

export interface CliResult {
  /** The exit code (1 when killed or not started). */
  status: number;
  out: string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tail(file: string, lines: number): string {
  try {
    // eslint-disable-next-line no-control-regex
    const text = readFileSync(file, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
    return text.split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Pids of live processes whose environment names our private state dir (e.g. the spawn broker, which
 * runs in its own process group). Only processes this harness started can carry that unique path. */
function processesUsing(stateDir: string): number[] {
  const marker = `OPENCLAW_STATE_DIR=${stateDir}`;
  const found: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.includes(marker)) found.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

export async function startGateway(options: StartGatewayOptions): Promise<Gateway> {
  if (!isInstalled()) {
    throw new Error('OpenClaw is not installed; run `npm run test:openclaw` (it installs it first)');
  }
  const home = mkdtempSync(join(tmpdir(), 'openclaw-gw-'));
  const stateDir = join(home, '.openclaw');
  const tmp = join(home, 'tmp');
  mkdirSync(stateDir, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  const configPath = join(stateDir, 'openclaw.json');
  const logDir = join(CACHE_DIR, 'logs');
  mkdirSync(logDir, { recursive: true });
  // Keep the logs of the last few runs only.
  const oldLogs = readdirSync(logDir)
    .filter((name) => name.startsWith('gateway-') && name.endsWith('.log'))
    .sort();
  for (const name of oldLogs.slice(0, Math.max(0, oldLogs.length - 9)))
    rmSync(join(logDir, name), { force: true });
  const logFile = join(logDir, `gateway-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);

  const port = options.port ?? (await freePort());
  const token = options.token ?? randomBytes(24).toString('hex');
  const config = (options.config ?? gatewayConfig)({
    port,
    token,
    modelBaseUrl: options.modelBaseUrl,
    fileLog: join(home, 'openclaw-file.log'),
  });
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });

  const env: NodeJS.ProcessEnv = {
    PATH: `${NODE_BIN_DIR}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    OPENCLAW_HOME: home,
    OPENCLAW_STATE_DIR: stateDir,
    OPENCLAW_CONFIG_PATH: configPath,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    NO_COLOR: '1',
    // The embedding preset from OpenClaw's docs: no mDNS, no detached respawn, no login-shell
    // snapshot, no channel transports; plus no update checks and no helper downloads.
    OPENCLAW_DISABLE_BONJOUR: '1',
    OPENCLAW_NO_RESPAWN: '1',
    OPENCLAW_EXEC_SHELL_SNAPSHOT: '0',
    OPENCLAW_SKIP_CHANNELS: '1',
    OPENCLAW_NO_AUTO_UPDATE: '1',
    OPENCLAW_OFFLINE: '1',
    ...options.env,
  };
  // `openclaw` on PATH for shell(): the pinned package under its Node 24, as installed on the operator's machine.
  const bin = join(home, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'openclaw'), `#!/bin/sh\nexec "${NODE_BIN}" "${OPENCLAW_ENTRY}" "$@"\n`, {
    mode: 0o755,
  });
  const shellEnv = { ...env, PATH: `${bin}${delimiter}${env.PATH ?? ''}` };

  // The gateway process of the moment: kill() ends it and start() runs another on the same home.
  let child: ChildProcess | undefined;
  let exitedWith: string | undefined;
  let exitPromise: Promise<void> = Promise.resolve();
  let healthyAfterMs = -1;
  const url = `http://127.0.0.1:${port}`;

  function spawnOnce(): number {
    const logFd = openSync(logFile, 'a');
    try {
      child = spawn(
        NODE_BIN,
        [OPENCLAW_ENTRY, 'gateway', 'run', '--port', String(port), '--bind', 'loopback'],
        { cwd: home, env, detached: true, stdio: ['ignore', logFd, logFd] },
      );
    } finally {
      closeSync(logFd);
    }
    const spawned = child;
    if (spawned.pid === undefined) throw new Error(`could not start ${NODE_BIN}`);
    exitedWith = undefined;
    exitPromise = new Promise<void>((resolve) => {
      spawned.once('exit', (code, signal) => {
        exitedWith = signal ?? String(code);
        resolve();
      });
    });
    return spawned.pid;
  }

  async function waitHealthy(startedAt: number): Promise<number> {
    const deadline = startedAt + (options.startTimeoutMs ?? 90_000);
    for (;;) {
      if (exitedWith !== undefined) {
        throw new Error(
          `gateway exited (${exitedWith}) before it was healthy; log ${logFile}:\n${tail(logFile, 40)}`,
        );
      }
      if (Date.now() > deadline) {
        throw new Error(
          `gateway not healthy after ${Date.now() - startedAt} ms; log ${logFile}:\n${tail(logFile, 40)}`,
        );
      }
      try {
        const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
        await response.arrayBuffer();
        if (response.status === 200) return Date.now() - startedAt;
      } catch {
        // Not listening yet.
      }
      await sleep(50);
    }
  }

  /** Ends the gateway process and the helpers it started (the spawn broker leaves its group). */
  async function killProcess(signal: NodeJS.Signals): Promise<void> {
    const pid = child?.pid;
    if (pid !== undefined && exitedWith === undefined) {
      killQuietly(-pid, signal);
      const gone = await Promise.race([exitPromise.then(() => true), sleep(10_000).then(() => false)]);
      if (!gone) {
        killQuietly(-pid, 'SIGKILL');
        await Promise.race([exitPromise, sleep(5_000)]);
      }
    }
    for (let i = 0; i < 20 && processesUsing(stateDir).length > 0; i++) await sleep(100);
    for (const other of processesUsing(stateDir)) killQuietly(other, 'SIGKILL');
  }

  const removeHome = () => {
    if (!options.keepTemp && process.env.AGENT_BRIDGE_OPENCLAW_KEEP !== '1') {
      rmSync(home, { recursive: true, force: true });
    }
  };
  // If the test process ends without stop() (a crash, Ctrl-C), take the gateway down with it: it runs in
  // its own process group, so a terminal's signal to ours does not reach it.
  const onExit = () => {
    if (child?.pid !== undefined) killQuietly(-child.pid, 'SIGKILL');
    for (const other of processesUsing(stateDir)) killQuietly(other, 'SIGKILL');
    removeHome();
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal = (signal: NodeJS.Signals) => {
    onExit();
    for (const name of signals) process.removeListener(name, onSignal);
    process.kill(process.pid, signal);
  };
  process.once('exit', onExit);
  for (const name of signals) process.once(name, onSignal);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    for (const name of signals) process.removeListener(name, onSignal);
    await killProcess('SIGTERM');
    removeHome();
  };

  const startedAt = Date.now();
  let pid = spawnOnce();
  try {
    healthyAfterMs = await waitHealthy(startedAt);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    url,
    port,
    token,
    home,
    stateDir,
    configPath,
    logFile,
    get pid() {
      return pid;
    },
    healthyAfterMs,
    exited: () => exitedWith !== undefined,
    logTail: (lines = 40) => tail(logFile, lines),
    log: () => tail(logFile, Number.MAX_SAFE_INTEGER),
    kill: () => killProcess('SIGKILL'),
    async start() {
      pid = spawnOnce();
      return waitHealthy(Date.now());
    },
    cli: (args, extra = {}) => run(NODE_BIN, [OPENCLAW_ENTRY, ...args], { ...env, ...extra }, home),
    shell: (command) => run('sh', ['-c', command], shellEnv, home),
    stop,
  };
}

/** A program with the gateway's environment, as the operator runs it next to the gateway. */
function run(file: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env, cwd, encoding: 'utf8', timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ status, out: `${stdout}${stderr}` });
      },
    );
  });
}

/** Merges a snippet into a config as an operator does: objects key by key, anything else replaced. */
export function mergeConfig(into: unknown, from: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(into) || !isObject(from)) return from;
  const out: Record<string, unknown> = { ...into };
  for (const [key, value] of Object.entries(from))
    out[key] = key in into ? mergeConfig(into[key], value) : value;
  return out;
}

/** True when the pinned OpenClaw runtime is in the cache (the test skips with a message otherwise). */
export function openclawAvailable(): boolean {
  return isInstalled() && existsSync(NODE_BIN);
}
