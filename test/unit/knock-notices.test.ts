import { describe, expect, it } from 'vitest';
import { NotificationLimiter, noticesFor, summaryFor } from '../../electron/decisions/notification-policy.js';
import { menuTemplate, type MenuActions } from '../../electron/decisions/menu-template.js';
import { shellStateFrom, type ShellState } from '../../electron/decisions/shell-state.js';
import { newKnockLine } from '../../src/cli/serve-lines.js';

// The tray's notice of an A2A caller that knocked (issue 28): where it called from, the name it claims (its
// own words, plain and short), the knock's code, the Access page; one at a time, the rest summed up later,
// and nothing for a flood the list's bounds refused (the count does not move).
const online: ShellState = {
  tunnel: { status: 'online', url: 'https://quiet-fox.loca.lt', since: '2026-11-25T10:00:00Z' },
  gateway: { status: 'configured', live: true },
  registry: { status: 'unregistered' },
  agentUrl: 'https://quiet-fox.loca.lt',
  access: { pending: 0 },
  startAtLogin: false,
};
const knock = (n: number, name?: string) => ({
  code: `KNCK-000${n}`,
  address: `203.0.113.${n}`,
  firstAt: new Date(Date.UTC(2026, 10, 25, 10, n)).toISOString(),
  ...(name !== undefined ? { name } : {}),
});
const knocking = (waiting: number, newest?: ReturnType<typeof knock>): ShellState => ({
  ...online,
  access: { pending: 0, knocks: { waiting, ...(newest ? { newest } : {}) } },
});

describe('the tray and knocks', () => {
  it('tells of a knock: its address, its claimed name as plain short text, its code, where to decide', () => {
    expect(
      noticesFor(online, knocking(1, knock(1, 'Research <b>bot</b>\n\u202eof the Very Long Name Inc.'))),
    ).toEqual([
      {
        kind: 'new-knock',
        title: 'An A2A agent without a key asks to talk to your agent',
        body:
          'From 203.0.113.1 (calls itself "Research b bot /b of the Very Long Name…"), knock KNCK-0001. ' +
          'It waits for your approval in the Access page.',
        page: 'access',
      },
    ]);
    expect(noticesFor(knocking(1, knock(1)), knocking(2, knock(2)))[0]?.body).toBe(
      'From 203.0.113.2, knock KNCK-0002. It waits for your approval in the Access page. 1 other waits too.',
    );
  });

  it('says nothing when a knock is decided, or when knocks past the bounds change nothing', () => {
    expect(noticesFor(knocking(2, knock(2)), knocking(1, knock(1)))).toEqual([]);
    expect(noticesFor(knocking(3, knock(3)), knocking(3, knock(3)))).toEqual([]);
    expect(noticesFor(knocking(1, knock(1)), online)).toEqual([]);
  });

  it('holds knocks beyond the cooldown and sums up those still waiting', () => {
    const limiter = new NotificationLimiter({ perKindMs: 300_000, burst: 3, windowMs: 60_000 });
    const arrive = (n: number, at: number) =>
      limiter.admit(noticesFor(knocking(n - 1, n > 1 ? knock(n - 1) : undefined), knocking(n, knock(n))), at);
    expect(arrive(1, 0)).toHaveLength(1);
    expect(arrive(2, 1000)).toEqual([]);
    expect(arrive(3, 2000)).toEqual([]);
    expect(limiter.nextReleaseAt()).toBe(300_000);
    expect(limiter.release(300_000, (kind) => summaryFor(kind, knocking(3, knock(3, 'Three'))))).toEqual([
      {
        kind: 'new-knock',
        title: '3 A2A agents without a key wait for your approval',
        body: 'The newest: From 203.0.113.3 (calls itself "Three"), knock KNCK-0003. Approve or deny in the Access page.',
        page: 'access',
      },
    ]);
    expect(summaryFor('new-knock', knocking(0))).toBeUndefined();
  });

  it("reads knocks from the console's status, and counts them among those waiting", () => {
    const status = {
      tunnel: online.tunnel,
      gateway: { status: 'configured', live: true },
      registry: { status: 'unregistered' as const },
      agent: { url: 'https://quiet-fox.loca.lt' },
      access: { pending: 1, knocks: { waiting: 2, newest: knock(2) } },
    };
    const state = shellStateFrom(status, false);
    expect(state.access.knocks).toEqual({ waiting: 2, newest: knock(2) });
    const noop = () => undefined;
    const actions = new Proxy({}, { get: () => noop }) as MenuActions;
    expect(menuTemplate(state, actions).find((item) => item.id === 'access')).toMatchObject({
      label: '3 senders waiting for approval…',
      visible: true,
    });
  });
});

describe("serve's line for a knock", () => {
  const knockView = {
    code: 'KNCK-0001',
    address: '203.0.113.1',
    via: 'proxy' as const,
    skill: 'chat',
    claimed: { name: 'Research bot' },
    preview: 'Hello\\nthere',
    messages: 1,
    firstAt: '2026-11-25T10:00:00.000Z',
    lastAt: '2026-11-25T10:00:00.000Z',
    expiresAt: '2026-11-26T10:00:00.000Z',
    suggestedName: '"Research bot" (knock from 203.0.113.1)',
  };

  it('says where it came from and what it claims; its message only when contents are kept', () => {
    expect(newKnockLine(knockView, false)).toBe(
      'Access: an A2A agent without a key knocks from 203.0.113.1 (claims to be "Research bot") at skill chat ' +
        "(knock KNCK-0001). Approve or deny it on the console's Access page.",
    );
    expect(newKnockLine({ ...knockView, via: 'local', claimed: {} }, true)).toBe(
      'Access: an A2A agent without a key knocks from this machine at skill chat ' +
        '(knock KNCK-0001, first message: "Hello\\nthere"). Approve or deny it on the console\'s Access page.',
    );
  });
});
