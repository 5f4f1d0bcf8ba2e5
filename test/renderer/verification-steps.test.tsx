// @vitest-environment happy-dom
/** The checks shown for a call, SAMVAD's or A2A's, from the steps it passed and its refusal (UI logic). */
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TrafficDetails } from '../../renderer/src/components/TrafficDetails';
import { verificationSteps, type StepView } from '../../renderer/src/traffic/steps';
import {
  A2A_STEPS,
  PIPELINE_STEPS,
  type A2ATrafficDetail,
  type TrafficEntry,
} from '../../src/protocol/console-api.js';
import type { RefusalStep } from '../../src/protocol/errors.js';
import { entry } from './fakes';

afterEach(cleanup);

/** Steps a call passes only when it sends what they check: a delegation token, a chain of calls. */
const WHEN_SENT: readonly string[] = ['delegation', 'chain'];

/** What the pipeline records for a signed call that passed every step up to `until` (not included). */
function signedUpTo(until?: RefusalStep): RefusalStep[] {
  const all: RefusalStep[] = PIPELINE_STEPS.filter((step) => !WHEN_SENT.includes(step));
  return until === undefined ? all : all.slice(0, all.indexOf(until) === -1 ? 0 : all.indexOf(until));
}

const states = (steps: StepView[]) => steps.map((s) => `${s.step}:${s.state}`);

describe('verificationSteps (SAMVAD)', () => {
  it('ticks the steps an accepted call passed, the handler included; a token or chain never sent is not ticked', () => {
    const steps = verificationSteps(entry(1, { passed: signedUpTo() }));
    expect(steps.map((s) => s.step)).toEqual([...PIPELINE_STEPS]);
    expect(steps.filter((s) => s.state !== 'pass')).toEqual([
      {
        step: 'delegation',
        label: 'Delegation token valid (when sent)',
        state: 'not-run',
        detail: 'No delegation token was sent.',
      },
      {
        step: 'chain',
        label: 'Not a loop: within the hop limit (when a chain was sent)',
        state: 'not-run',
        detail: 'The call named no chain of calls: it starts one.',
      },
    ]);
  });

  it('refused at the chain: a loop or too many hops, with the message', () => {
    const steps = verificationSteps(
      entry(9, {
        verdict: 'chain',
        code: 'DELEGATION_EXCEEDED',
        status: 400,
        message: 'This call came back to this agent',
        passed: ['size', 'shape', 'timestamp', 'signature'],
      }),
    );
    expect(steps.find((s) => s.step === 'chain')).toMatchObject({
      state: 'fail',
      detail: 'DELEGATION_EXCEEDED: This call came back to this agent',
    });
    expect(steps.find((s) => s.step === 'trust')?.state).toBe('not-run');
  });

  it.each(PIPELINE_STEPS.filter((step) => !WHEN_SENT.includes(step)))(
    'refused at %s: the steps it passed are ticked, it failed with the message, later ones did not run',
    (step) => {
      const steps = verificationSteps(
        entry(2, {
          verdict: step,
          code: 'AUTH_FAILED',
          status: 401,
          message: `no good at ${step}`,
          passed: signedUpTo(step),
        }),
      );
      const at = PIPELINE_STEPS.indexOf(step);
      expect(
        steps.slice(0, at).every((s) => s.state === (WHEN_SENT.includes(s.step) ? 'not-run' : 'pass')),
      ).toBe(true);
      expect(steps[at]).toMatchObject({ step, state: 'fail', detail: `AUTH_FAILED: no good at ${step}` });
      expect(steps.slice(at + 1).every((s) => s.state === 'not-run')).toBe(true);
    },
  );

  it('refused by the access precheck: nothing after the signature is ticked, for none of it ran', () => {
    // Issue 26, item 6: a stranger refused before its limits, nonce and input were checked.
    const steps = verificationSteps(
      entry(3, {
        verdict: 'access',
        code: 'AUTH_FAILED',
        status: 403,
        message: 'waits for approval',
        passed: ['size', 'shape', 'timestamp', 'signature'],
      }),
    );
    expect(states(steps)).toEqual([
      'size:pass',
      'shape:pass',
      'timestamp:pass',
      'signature:pass',
      'delegation:not-run',
      'chain:not-run',
      'trust:not-run',
      'rate-limit:not-run',
      'nonce:not-run',
      'skill:not-run',
      'input:not-run',
      'access:fail',
      'handler:not-run',
    ]);
  });

  it('an unsigned call: its signature is let through unchecked, and it has no timestamp or nonce', () => {
    const steps = verificationSteps(
      entry(4, {
        signatureForm: 'unsigned',
        admittedBy: 'unsigned-open',
        passed: ['size', 'trust', 'shape', 'rate-limit', 'skill', 'input', 'access', 'handler'],
      }),
    );
    const by = Object.fromEntries(steps.map((s) => [s.step, s]));
    expect(by.signature).toMatchObject({ state: 'warn', detail: expect.stringMatching(/^Unsigned: let in/) });
    expect(by.timestamp).toMatchObject({ state: 'not-run', detail: 'An unsigned call carries none.' });
    expect(by.nonce).toMatchObject({ state: 'not-run', detail: 'An unsigned call carries none.' });
    expect(by.handler?.state).toBe('pass');
  });

  it("an accepted async task: the gateway's turn comes after the 202, so it is not ticked", () => {
    const steps = verificationSteps(entry(5, { mode: 'async', status: 202, passed: signedUpTo('handler') }));
    expect(steps.at(-1)).toMatchObject({
      step: 'handler',
      state: 'not-run',
      detail: expect.stringMatching(/^Runs after the 202 reply/),
    });
  });

  it('falls back to the code, then the HTTP status, when there is no message', () => {
    expect(
      verificationSteps(entry(3, { verdict: 'nonce', code: 'REPLAY_DETECTED', status: 409 })).find(
        (s) => s.step === 'nonce',
      )?.detail,
    ).toBe('REPLAY_DETECTED');
    expect(verificationSteps(entry(4, { verdict: 'size', status: 413 }))[0]?.detail).toBe('HTTP 413');
  });

  it('says how the access policy let an accepted sender through', () => {
    const steps = verificationSteps(entry(6, { admittedBy: 'allowed-peer', passed: signedUpTo() }));
    expect(steps.find((s) => s.step === 'access')).toMatchObject({
      state: 'pass',
      detail: 'Admitted as on the allowed peers list (Settings → Access).',
    });
  });

  it('shows a held task as passed up to access, held there, and not yet at the gateway', () => {
    const steps = verificationSteps(
      entry(9, {
        mode: 'async',
        status: 202,
        held: true,
        message: 'held (request K7Q-4PX)',
        passed: signedUpTo('access'),
      }),
    );
    const at = PIPELINE_STEPS.indexOf('access');
    expect(steps.slice(0, at).every((s) => s.state === 'pass' || WHEN_SENT.includes(s.step))).toBe(true);
    expect(steps[at]).toMatchObject({ step: 'access', state: 'held' });
    expect(steps[at]?.detail).toBe(
      'Held: the task waits until you approve or deny its sender on the Access page.',
    );
    expect(steps[at + 1]).toMatchObject({ step: 'handler', state: 'not-run' });
  });

  it('names the injection screen rule on the input step, passed (flag) or refused', () => {
    const flagged = verificationSteps(
      entry(10, { screen: { rule: 'override-instructions' }, passed: signedUpTo() }),
    );
    expect(flagged.find((s) => s.step === 'input')).toMatchObject({
      state: 'pass',
      detail: 'Flagged by the injection screen (rule “override-instructions”) and let through.',
    });
    const refused = verificationSteps(
      entry(11, {
        verdict: 'input',
        status: 400,
        code: 'INJECTION_DETECTED',
        message: 'refused',
        screen: { rule: 'exfiltrate-secrets' },
        passed: signedUpTo('input'),
      }),
    );
    expect(refused.find((s) => s.step === 'input')).toMatchObject({
      state: 'fail',
      detail: 'INJECTION_DETECTED: refused (injection screen rule “exfiltrate-secrets”)',
    });
  });

  it('ticks nothing for an entry logged before the steps were recorded: only its refusal shows', () => {
    const accepted = verificationSteps(entry(12));
    expect(accepted.every((s) => s.state === 'not-run')).toBe(true);
    const refused = verificationSteps(entry(13, { verdict: 'nonce', status: 409 }));
    expect(refused.filter((s) => s.state !== 'not-run')).toMatchObject([{ step: 'nonce', state: 'fail' }]);
  });

  it('claims nothing for a verdict it does not know (a newer core)', () => {
    const steps = verificationSteps(entry(5, { verdict: 'quantum' as never }));
    expect(steps.every((s) => s.state === 'not-run')).toBe(true);
  });
});

const a2aCall = (overrides: Partial<TrafficEntry>, a2a: Partial<A2ATrafficDetail> = {}): TrafficEntry =>
  entry(20, {
    endpoint: '/a2a/jsonrpc',
    protocol: 'a2a',
    signatureForm: 'none',
    sender: 'a2a-key:0a1b2c3d4e5f',
    callerName: 'Research bot',
    ...overrides,
    a2a: { method: 'SendMessage', version: '1.0', transport: 'jsonrpc', ...a2a },
  });

describe('verificationSteps (A2A)', () => {
  it("shows the A2A door's own steps, none of SAMVAD's", () => {
    const steps = verificationSteps(
      a2aCall(
        { skill: 'chat', passed: ['key', 'request', 'limits', 'screen', 'task'] },
        { taskState: 'completed' },
      ),
    );
    expect(steps.map((s) => s.step)).toEqual([...A2A_STEPS]);
    expect(steps.every((s) => s.state === 'pass')).toBe(true);
    expect(steps.at(-1)?.detail).toBe('The task is completed.');
  });

  it('a call refused at its key: that step failed, nothing is ticked (issue 26, item 6)', () => {
    const steps = verificationSteps(
      a2aCall(
        {
          verdict: 'access',
          status: 401,
          code: 'AUTH_FAILED',
          message: 'This A2A key was revoked',
          passed: [],
        },
        { method: undefined, failedAt: 'key' },
      ),
    );
    expect(states(steps)).toEqual([
      'key:fail',
      'request:not-run',
      'limits:not-run',
      'screen:not-run',
      'task:not-run',
    ]);
    expect(steps[0]?.detail).toBe('AUTH_FAILED: This A2A key was revoked');
  });

  it('a read runs no turn: its limits and screen are not run, and say why', () => {
    const steps = verificationSteps(
      a2aCall({ passed: ['key', 'request', 'task'] }, { method: 'GetTask', taskState: 'working' }),
    );
    expect(states(steps)).toEqual([
      'key:pass',
      'request:pass',
      'limits:not-run',
      'screen:not-run',
      'task:pass',
    ]);
    expect(steps[2]?.detail).toBe('GetTask does not run this step.');
  });

  it('over its limits: the limits failed, the screen and the task never ran', () => {
    const steps = verificationSteps(
      a2aCall(
        {
          verdict: 'rate-limit',
          status: 429,
          code: 'RATE_LIMITED',
          message: 'retry in 7 s',
          passed: ['key', 'request'],
        },
        { failedAt: 'limits' },
      ),
    );
    expect(states(steps)).toEqual([
      'key:pass',
      'request:pass',
      'limits:fail',
      'screen:not-run',
      'task:not-run',
    ]);
  });

  it('the screen: flagged and let through, refused with its rule, or off', () => {
    const flagged = verificationSteps(
      a2aCall({ screen: { rule: 'override' }, passed: ['key', 'request', 'limits', 'screen', 'task'] }),
    );
    expect(flagged[3]).toMatchObject({ state: 'pass', detail: 'Flagged (rule “override”) and let through.' });
    const refused = verificationSteps(
      a2aCall(
        {
          verdict: 'input',
          status: 400,
          code: 'INJECTION_DETECTED',
          message: 'refused',
          screen: { rule: 'override' },
          passed: ['key', 'request', 'limits'],
        },
        { failedAt: 'screen' },
      ),
    );
    expect(refused[3]).toMatchObject({
      state: 'fail',
      detail: 'INJECTION_DETECTED: refused (injection screen rule “override”)',
    });
    const off = verificationSteps(a2aCall({ passed: ['key', 'request', 'limits', 'task'] }));
    expect(off[3]).toMatchObject({ state: 'not-run', detail: 'The injection screen is off (Settings).' });
  });

  it('a keyless caller passed the key step without a key: it says so', () => {
    const steps = verificationSteps(
      a2aCall({
        sender: 'a2a-anon:203.0.113.7',
        callerName: undefined,
        passed: ['key', 'request', 'limits', 'task'],
      }),
    );
    expect(steps[0]).toMatchObject({
      state: 'pass',
      detail: 'No key: a keyless caller, let in by the open policy.',
    });
  });

  it('an entry logged before the steps were recorded ticks nothing', () => {
    expect(verificationSteps(a2aCall({})).every((s) => s.state === 'not-run')).toBe(true);
  });
});

describe('TrafficDetails', () => {
  it('shows why a tampered envelope was refused, with its response and envelope fields', () => {
    render(
      <TrafficDetails
        entry={entry(7, {
          verdict: 'signature',
          code: 'AUTH_FAILED',
          status: 401,
          message: 'signature does not verify',
          forwardedFor: '203.0.113.9',
          diagnosis: 'the body changed after signing',
          durationMs: 3,
          passed: ['size', 'shape', 'timestamp'],
        })}
        onClose={vi.fn()}
      />,
    );
    const panel = screen.getByTestId('traffic-details');
    const shown = within(panel)
      .getAllByTestId('verification-step')
      .map((step) => `${step.dataset.step}:${step.dataset.state}`);
    // The pipeline's own order (the core owns it): the steps before the signature passed.
    const at = PIPELINE_STEPS.indexOf('signature');
    expect(shown).toEqual(
      PIPELINE_STEPS.map((step, index) =>
        index < at ? `${step}:pass` : index === at ? `${step}:fail` : `${step}:not-run`,
      ),
    );
    expect(within(panel).queryByTestId('steps-not-recorded')).toBeNull();
    expect(within(panel).getByText('AUTH_FAILED: signature does not verify')).toBeTruthy();
    expect(within(panel).getByText('203.0.113.9')).toBeTruthy();
    expect(within(panel).getByText('trace-7')).toBeTruthy();
    expect(within(panel).getByText('the body changed after signing')).toBeTruthy();
    expect(within(panel).getByText('3 ms')).toBeTruthy();
    expect(within(panel).getByText(/Not kept: turn on “Keep message contents”/)).toBeTruthy();
  });

  it('shows how the sender was admitted, a held task, and the screen rule', () => {
    render(
      <TrafficDetails
        entry={entry(12, {
          mode: 'async',
          status: 202,
          held: true,
          admittedBy: 'approved',
          screen: { rule: 'fake-system-tag' },
        })}
        onClose={vi.fn()}
      />,
    );
    const panel = screen.getByTestId('traffic-details');
    expect(within(panel).getByText('held for approval')).toBeTruthy();
    expect(within(panel).getByTestId('admitted-by').textContent).toBe('a sender you approved');
    expect(within(panel).getByTestId('held-note').textContent).toMatch(/waits until you approve or deny/);
    expect(within(panel).getByRole('link', { name: 'Access page' }).getAttribute('href')).toBe('#/access');
    expect(within(panel).getByTestId('screen-rule').textContent).toBe(
      'matched rule fake-system-tag: flagged, let through',
    );
    const access = within(panel)
      .getAllByTestId('verification-step')
      .find((step) => step.dataset.step === 'access');
    expect(access?.dataset.state).toBe('held');
  });

  it('shows the previews when contents are kept', () => {
    render(
      <TrafficDetails
        entry={entry(8, { preview: { payload: '{"message":"hi"}', reply: 'hello' } })}
        onClose={vi.fn()}
      />,
    );
    expect(screen.getByText('{"message":"hi"}')).toBeTruthy();
    expect(screen.getByText('hello')).toBeTruthy();
  });
});

describe('TrafficDetails of an A2A call', () => {
  it('shows its own steps and says the method was not read when the call was refused at its key', () => {
    render(
      <TrafficDetails
        entry={a2aCall(
          { verdict: 'access', status: 401, code: 'AUTH_FAILED', message: 'No key was sent.', passed: [] },
          { method: undefined, failedAt: 'key' },
        )}
        onClose={vi.fn()}
      />,
    );
    const panel = screen.getByTestId('traffic-details');
    const shown = within(panel)
      .getAllByTestId('verification-step')
      .map((step) => `${step.dataset.step}:${step.dataset.state}`);
    expect(shown).toEqual([
      'key:fail',
      'request:not-run',
      'limits:not-run',
      'screen:not-run',
      'task:not-run',
    ]);
    expect(panel.textContent).not.toMatch(/Signature verifies|Nonce not seen|Skill exists|Timestamp fresh/);
    expect(within(panel).getByTestId('a2a-method').textContent).toBe(
      'not read: the call was refused before its body was read',
    );
  });

  it('says when its steps were not recorded (an entry from an earlier version)', () => {
    render(<TrafficDetails entry={a2aCall({ verdict: 'access', status: 401 })} onClose={vi.fn()} />);
    expect(screen.getByTestId('steps-not-recorded').textContent).toMatch(/only the step that refused it/);
    expect(screen.getAllByTestId('verification-step').every((step) => step.dataset.state === 'not-run')).toBe(
      true,
    );
  });
});
