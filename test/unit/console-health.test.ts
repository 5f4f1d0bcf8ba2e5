import { describe, expect, it } from 'vitest';
import { healthOf, shellStateFrom, type StatusFacts } from '../../electron/decisions/shell-state.js';
import type { GatewayAgentView } from '../../src/protocol/console-api.js';
import {
  healthFactsOf,
  healthSummary,
  type HealthCheck,
  type HealthStatus,
} from '../../src/protocol/console-health.js';

// Issue 26, item 15: "is it working?" in one line, from the checks that actually ran, the same in the
// console's Overview and in the tray: one table, read through the console's facts and through the shell's.

const URL = 'https://quiet-otter.loca.lt';
const restricted: GatewayAgentView = {
  id: 'public',
  model: 'openclaw/public',
  check: 'present',
  tools: { verdict: 'restricted', detail: 'minimal' },
  snippet: '',
};

type Status = StatusFacts & HealthStatus;
type Tunnel = StatusFacts['tunnel'];

function status(change: {
  tunnel?: Tunnel;
  gateway?: Partial<StatusFacts['gateway']>;
  agent?: Partial<GatewayAgentView>;
  pending?: number;
}): Status {
  return {
    tunnel: change.tunnel ?? {
      status: 'online',
      url: URL,
      since: '2026-12-07T10:00:00Z',
      reachability: { state: 'reachable', checkedAt: '2026-12-07T10:00:05Z' },
    },
    gateway: {
      status: 'configured',
      live: true,
      agent: { ...restricted, ...change.agent },
      ...change.gateway,
    },
    registry: { status: 'unregistered' },
    agent: { url: URL },
    access: { pending: change.pending ?? 0 },
  };
}

const online = (reachability: Extract<Tunnel, { status: 'online' }>['reachability']): Tunnel => ({
  status: 'online',
  url: URL,
  since: '2026-12-07T10:00:00Z',
  reachability,
});

const checks = (list: HealthCheck[]) => Object.fromEntries(list.map((check) => [check.id, check.state]));

const TABLE: [string, Status, string, RegExp, Record<string, string>][] = [
  [
    'all good',
    status({}),
    'online',
    /^Online at https:\/\/quiet-otter\.loca\.lt: reachable from outside$/,
    { reachable: 'ok', gateway: 'ok', agent: 'ok', approvals: 'ok' },
  ],
  [
    // The issue's case: the tunnel client is connected ("Online") but calls through it fail.
    'online but not reachable from outside',
    status({ tunnel: online({ state: 'unreachable', problem: 'answered HTTP 408' }) }),
    'degraded',
    /^Not reachable at https:\/\/quiet-otter\.loca\.lt: answered HTTP 408$/,
    { reachable: 'problem', gateway: 'ok', agent: 'ok', approvals: 'ok' },
  ],
  [
    'still checking from outside',
    status({ tunnel: online({ state: 'checking' }) }),
    'degraded',
    /^Checking https:\/\/quiet-otter\.loca\.lt from outside$/,
    { reachable: 'unknown', gateway: 'ok', agent: 'ok', approvals: 'ok' },
  ],
  [
    // The self-test's chat call failed: the gateway's state says so.
    'gateway answering, chat failing',
    status({
      gateway: {
        problem: {
          kind: 'endpoint-disabled',
          diagnosis: 'Chat endpoint disabled.',
          fix: 'Enable it.',
          at: '2026-12-07T10:00:00Z',
        },
      },
    }),
    'degraded',
    /^Chat endpoint disabled\.$/,
    { reachable: 'ok', gateway: 'problem', agent: 'ok', approvals: 'ok' },
  ],
  [
    'gateway not answering',
    status({ gateway: { live: false } }),
    'degraded',
    /^The gateway is not answering$/,
    { reachable: 'ok', gateway: 'problem', agent: 'ok', approvals: 'ok' },
  ],
  [
    'callers reach an agent with host tools',
    status({ agent: { tools: { verdict: 'exposes-host-tools', tools: ['exec'], detail: 'full' } } }),
    'degraded',
    /^The gateway agent "public" exposes host tools: exec$/,
    { reachable: 'ok', gateway: 'ok', agent: 'problem', approvals: 'ok' },
  ],
  [
    "callers' agent missing",
    status({ agent: { check: 'missing' } }),
    'degraded',
    /^Callers' agent "public" is missing on the gateway: add it$/,
    { reachable: 'ok', gateway: 'ok', agent: 'problem', approvals: 'ok' },
  ],
  [
    'senders waiting: working, and it says so',
    status({ pending: 2 }),
    'online',
    /^Online at /,
    { reachable: 'ok', gateway: 'ok', agent: 'ok', approvals: 'attention' },
  ],
  [
    'no tunnel',
    status({ tunnel: { status: 'off' } }),
    'offline',
    /this machine only/,
    { reachable: 'unknown', gateway: 'ok', agent: 'ok', approvals: 'ok' },
  ],
  [
    'tunnel failed',
    status({ tunnel: { status: 'failed', reason: 'no command set' } }),
    'error',
    /^Tunnel failed: no command set$/,
    { reachable: 'problem', gateway: 'ok', agent: 'ok', approvals: 'ok' },
  ],
  [
    'gateway not checked yet, tools unknown',
    status({
      gateway: { live: undefined },
      agent: { check: 'unknown', tools: { verdict: 'unknown', detail: 'remote' } },
    }),
    'online',
    /^Online at /,
    { reachable: 'ok', gateway: 'unknown', agent: 'unknown', approvals: 'ok' },
  ],
];

describe('the health summary', () => {
  it.each(TABLE)('%s', (_name, input, health, reason, expected) => {
    const summary = healthSummary(healthFactsOf(input));
    expect(summary.health).toBe(health);
    expect(summary.reason).toMatch(reason);
    expect(checks(summary.checks)).toEqual(expected);
    // The tray reads the same status through the shell's state: the same word and the same sentence.
    expect(healthOf(shellStateFrom(input, false))).toEqual({
      health: summary.health,
      reason: summary.reason,
    });
  });

  it('says how many wait for approval, and each check in words', () => {
    const summary = healthSummary(healthFactsOf(status({ pending: 2 })));
    expect(summary.checks.map((check) => check.text)).toEqual([
      'Reachable from outside',
      'Gateway answering',
      "Callers' agent restricted",
      '2 senders wait for your approval',
    ]);
  });
});
