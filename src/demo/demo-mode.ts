// `serve --demo`: the agent, its console and its traffic with no gateway to set up. What a demo run is made
// of, and what it refuses, so that it is never on by accident and never mistaken for the real agent:
//  - only the `--demo` flag turns it on, for one run: no setting or environment variable does, so nothing
//    saved can leave an operator's agent answering from a stand-in;
//  - it brings its own gateway (demo-gateway.ts), so it refuses a real gateway's address, token or model;
//  - it keeps a data dir of its own (`<data dir>/demo`: its own identity, settings, traffic and approvals),
//    and opens no tunnel unless `--tunnel` says so: a demo is local;
//  - the card (SAMVAD and A2A), the console and the start banner say "demo" while it runs.
import { join } from 'node:path';
import { restrictedAgentSnippet } from '../bridge/agent-snippet.js';
import { writeFileAtomic } from '../lib/atomic-file.js';
import { defaultDataDir } from '../settings/data-dir.js';
import type { ServeArgs } from '../settings/flags.js';
import type { SettingName, Settings } from '../settings/schema.js';
import type { OverrideOrigin } from '../settings/sources.js';
import { startDemoGateway, type DemoGateway } from './demo-gateway.js';

/** The card's description while the demo runs (SAMVAD's and A2A's): callers and the registry read it. */
export const DEMO_DESCRIPTION =
  "DEMO: this agent answers from Agent Bridge's built-in demo gateway, not from an AI model. Every reply " +
  'says so. Run without --demo to bridge an OpenClaw gateway.';

/** The stand-in's agents as an OpenClaw config declares them (the check of the agent for callers reads it). */
export const DEMO_OPENCLAW_FILE = 'demo-openclaw.json';

/** Settings that name the gateway: the demo brings its own. */
const GATEWAY_SETTINGS: SettingName[] = ['gatewayUrl', 'gatewayToken', 'gatewayModel'];

/**
 * What the demo sets and keeps for as long as it runs (the console refuses to change them): its gateway, and
 * the card's description that says it is a demo.
 */
export const DEMO_HELD_SETTINGS: readonly SettingName[] = [...GATEWAY_SETTINGS, 'agentDescription'];

const BY_DEMO: OverrideOrigin = { source: 'flag', name: '--demo' };

/** Where a demo keeps its identity and state unless `--data-dir` says otherwise. */
export function demoDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(defaultDataDir(env), 'demo');
}

/** What `--demo` cannot be combined with, before anything starts: an Error that names the fix. */
export function checkDemoArgs(args: ServeArgs): void {
  const given = GATEWAY_SETTINGS.map((name) => args.origins[name]).filter(
    (origin): origin is OverrideOrigin => origin !== undefined,
  );
  if (given.length > 0) {
    const names = given.map((origin) => origin.name).join(' and ');
    const drop = given.some((origin) => origin.source === 'env') ? 'unset' : 'drop';
    throw new Error(
      `--demo brings its own stand-in gateway, so it cannot be combined with ${names}: ${drop} ${names} ` +
        'to try the demo, or drop --demo to bridge your gateway.',
    );
  }
  if (args.register) {
    throw new Error(
      '--demo cannot be combined with --register: a demo agent is not listed in the registry. Drop --register.',
    );
  }
}

export interface DemoRun {
  /** The settings the agent runs with: the data dir's, this run's flags, and the stand-in gateway. */
  settings: Settings;
  /** Where each setting given for this run comes from (the console's Settings page shows it). */
  origins: Partial<Record<SettingName, OverrideOrigin>>;
  /** The agent's environment: OpenClaw's config read from the demo's file, never the operator's. */
  env: NodeJS.ProcessEnv;
  gateway: DemoGateway;
}

/** Starts the stand-in gateway and makes the demo's settings from the data dir's and this run's flags. */
export async function startDemo(
  dataDir: string,
  settings: Settings,
  args: ServeArgs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DemoRun> {
  if (settings.redisUrl) {
    const where = args.origins.redisUrl?.name ?? `settings.json in ${dataDir}`;
    throw new Error(
      `--demo runs alone, and ${where} sets a Redis for replicas (redisUrl): drop it, or run the demo with ` +
        'another --data-dir.',
    );
  }
  const openclawConfig = join(dataDir, DEMO_OPENCLAW_FILE);
  // The snippet the console hands an operator, so the stand-in's `public` agent is checked as restricted,
  // exactly as a well set-up gateway's would be.
  writeFileAtomic(
    openclawConfig,
    "// The demo gateway's agents, as an OpenClaw config declares them (written by `serve --demo`, read by\n" +
      "// the bridge's check of the agent callers reach; OpenClaw never reads it).\n" +
      restrictedAgentSnippet('public'),
  );
  const gateway = await startDemoGateway();
  const { gatewayModel: _model, ...rest } = settings;
  return {
    settings: {
      ...rest,
      gatewayUrl: gateway.url,
      gatewayToken: gateway.token,
      agentDescription: DEMO_DESCRIPTION,
      // A demo is local: its id is agent://127.0.0.1:PORT unless this run asks for a tunnel.
      tunnel: args.overrides.tunnel ?? 'none',
    },
    origins: {
      ...args.origins,
      gatewayUrl: BY_DEMO,
      gatewayToken: BY_DEMO,
      agentDescription: BY_DEMO,
      ...(args.overrides.tunnel === undefined ? { tunnel: BY_DEMO } : {}),
    },
    env: { ...env, OPENCLAW_CONFIG_PATH: openclawConfig },
    gateway,
  };
}

/**
 * The start banner's demo lines: what runs, and the command that calls it (with the demo's data dir, so the
 * call is signed by the demo agent itself and needs no approval).
 */
export function demoBannerLines(
  agentId: string,
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const signer = dataDir === demoDataDir(env) ? '--demo' : `--data-dir ${shellWord(dataDir)}`;
  return [
    '  Demo:       a built-in stand-in gateway answers every call, and says so: no model is behind the replies',
    `  Call it:    npx agent-bridge call ${signer} ${agentId} "Hello"   (then see it in the console's Traffic)`,
  ];
}

function shellWord(text: string): string {
  return /^[\w./:@-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
