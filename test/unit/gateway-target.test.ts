// Who callers may reach (issue 15 finding 9): an agent that exposes host tools serves only once the operator
// accepted that agent with exactly those tools, and the tool verdict read from the config file counts only
// while the file is what the gateway runs. The pure decisions behind GatewayTarget.
import { describe, expect, it } from 'vitest';
import { acceptanceOf, refusalOf, runningVerdict } from '../../src/bridge/gateway-target.js';
import type { GatewayAgentView, ToolExposureView } from '../../src/protocol/console-api.js';

const EXPOSED: ToolExposureView = {
  verdict: 'exposes-host-tools',
  tools: ['apply_patch', 'exec'],
  detail: 'Agent "main" is offered exec and apply_patch.',
};
const RESTRICTED: ToolExposureView = { verdict: 'restricted', detail: 'nothing' };
const AT = '2026-01-02T03:04:05.000Z';

function view(fields: Partial<GatewayAgentView> = {}): GatewayAgentView {
  const base: GatewayAgentView = {
    id: 'main',
    model: 'openclaw/main',
    check: 'present',
    tools: EXPOSED,
    snippet: '{}',
  };
  const merged = { ...base, ...fields };
  return { ...merged, ...(fields.acceptance ? {} : { acceptance: acceptanceOf(merged, undefined) }) };
}

describe('acceptanceOf', () => {
  it('needs the operator for an agent that exposes host tools, and nothing otherwise', () => {
    expect(acceptanceOf(view(), undefined)).toEqual({ state: 'needed' });
    expect(acceptanceOf(view({ tools: RESTRICTED }), undefined)).toBeUndefined();
    expect(
      acceptanceOf(view({ tools: { verdict: 'unknown', detail: 'remote' } }), undefined),
    ).toBeUndefined();
  });

  it('is accepted for exactly that agent with exactly those tools, in any order', () => {
    expect(acceptanceOf(view(), { agent: 'main', tools: ['exec', 'apply_patch'], at: AT })).toEqual({
      state: 'accepted',
      at: AT,
    });
  });

  it('asks again when a tool is added or removed, saying what was accepted', () => {
    for (const tools of [['exec'], ['exec', 'apply_patch', 'read'], []]) {
      expect(acceptanceOf(view(), { agent: 'main', tools, at: AT })).toEqual({
        state: 'changed',
        tools,
        at: AT,
      });
    }
  });

  it('belongs to one agent: another agent with the same tools needs its own', () => {
    const ops = view({ id: 'ops', model: 'openclaw/ops' });
    expect(acceptanceOf(ops, { agent: 'main', tools: ['exec', 'apply_patch'], at: AT })).toEqual({
      state: 'needed',
    });
    // An explicit model (no agent id) is named by the model.
    const model = view({ id: undefined, model: 'openclaw' });
    expect(acceptanceOf(model, { agent: 'openclaw', tools: ['exec', 'apply_patch'], at: AT })).toMatchObject({
      state: 'accepted',
    });
  });
});

describe('refusalOf: callers get AGENT_UNAVAILABLE as for a missing agent', () => {
  it('refuses an exposing agent until accepted, then serves it', () => {
    expect(refusalOf(view())).toEqual({ problem: 'agent-exposed', detail: 'apply_patch, exec' });
    expect(refusalOf(view({ acceptance: { state: 'changed', tools: ['exec'], at: AT } }))).toMatchObject({
      problem: 'agent-exposed',
    });
    expect(refusalOf(view({ acceptance: { state: 'accepted', at: AT } }))).toBeUndefined();
  });

  it('refuses a missing agent first, and an agent whose config the gateway has not loaded', () => {
    expect(refusalOf(view({ check: 'missing', available: ['public'] }))).toEqual({
      problem: 'agent-missing',
      detail: 'it has public',
    });
    const notLoaded: ToolExposureView = { verdict: 'unknown', detail: 'd', notLoaded: 'the file has "x"' };
    expect(refusalOf(view({ tools: notLoaded }))).toEqual({
      problem: 'agent-unverified',
      detail: 'the file has "x"',
    });
  });

  it('serves a restricted agent, and one it cannot check (a remote gateway, another server)', () => {
    expect(refusalOf(view({ tools: RESTRICTED }))).toBeUndefined();
    expect(refusalOf(view({ tools: { verdict: 'unknown', detail: 'remote' } }))).toBeUndefined();
    expect(refusalOf(view({ check: 'unknown', tools: RESTRICTED }))).toBeUndefined();
  });
});

describe('runningVerdict: the file counts only while it is what the gateway runs', () => {
  it('keeps the verdict when the file declares exactly the agents the gateway lists', () => {
    expect(runningVerdict(RESTRICTED, ['main', 'public'], ['public', 'main'])).toBe(RESTRICTED);
    expect(runningVerdict(EXPOSED, ['main'], ['main'])).toBe(EXPOSED);
  });

  it('is unknown, never restricted, when the file defines an agent the gateway does not run', () => {
    // The case: a snippet merged into a stock config that OpenClaw refused to reload.
    const verdict = runningVerdict(RESTRICTED, ['main', 'public'], ['main']);
    expect(verdict).toMatchObject({
      verdict: 'unknown',
      notLoaded: 'the file has "public", which the gateway does not run',
    });
    expect(verdict.detail).toMatch(/^OpenClaw has not loaded its config file \(the file has "public"/);
    expect(verdict.detail).toContain('openclaw config validate');
  });

  it('is unknown when the gateway runs an agent the file lacks (an edit not loaded yet, another file)', () => {
    expect(runningVerdict(EXPOSED, ['main'], ['main', 'ops'])).toMatchObject({
      verdict: 'unknown',
      notLoaded: 'the gateway runs "ops", which the file lacks',
    });
  });
});
