// @vitest-environment happy-dom
/** The verification steps shown for an envelope, derived from its verdict (UI logic; no server). */
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TrafficDetails } from '../../renderer/src/components/TrafficDetails';
import { verificationSteps } from '../../renderer/src/traffic/steps';
import { PIPELINE_STEPS } from '../../src/protocol/console-api.js';
import { entry } from './fakes';

afterEach(cleanup);

describe('verificationSteps', () => {
  it('marks every step passed for an accepted envelope, the handler included', () => {
    const steps = verificationSteps(entry(1));
    expect(steps.map((s) => s.step)).toEqual([...PIPELINE_STEPS]);
    expect(steps.every((s) => s.state === 'pass')).toBe(true);
  });

  it.each(PIPELINE_STEPS.map((step, index) => [step, index] as const))(
    'refused at %s: earlier steps passed, it failed with the message, later ones did not run',
    (step, index) => {
      const steps = verificationSteps(
        entry(2, { verdict: step, code: 'AUTH_FAILED', status: 401, message: `no good at ${step}` }),
      );
      expect(steps.slice(0, index).map((s) => s.state)).toEqual(Array(index).fill('pass'));
      expect(steps[index]).toMatchObject({ step, state: 'fail', detail: `AUTH_FAILED: no good at ${step}` });
      expect(steps.slice(index + 1).every((s) => s.state === 'not-run')).toBe(true);
    },
  );

  it('falls back to the code, then the HTTP status, when there is no message', () => {
    expect(
      verificationSteps(entry(3, { verdict: 'nonce', code: 'REPLAY_DETECTED', status: 409 })).find(
        (s) => s.step === 'nonce',
      )?.detail,
    ).toBe('REPLAY_DETECTED');
    expect(verificationSteps(entry(4, { verdict: 'size', status: 413 }))[0]?.detail).toBe('HTTP 413');
  });

  it('says how the access policy let an accepted sender through', () => {
    const steps = verificationSteps(entry(6, { admittedBy: 'allowed-peer' }));
    expect(steps.find((s) => s.step === 'access')).toMatchObject({
      state: 'pass',
      detail: 'Admitted as on the allowed peers list (Settings → Access).',
    });
  });

  it('shows a held task as passed up to access, held there, and not yet at the gateway', () => {
    const steps = verificationSteps(
      entry(9, { mode: 'async', status: 202, held: true, message: 'held (request K7Q-4PX)' }),
    );
    const at = PIPELINE_STEPS.indexOf('access');
    expect(steps.slice(0, at).every((s) => s.state === 'pass')).toBe(true);
    expect(steps[at]).toMatchObject({ step: 'access', state: 'held' });
    expect(steps[at]?.detail).toBe(
      'Held: the task waits until you approve or deny its sender on the Access page.',
    );
    expect(steps[at + 1]).toMatchObject({ step: 'handler', state: 'not-run' });
  });

  it('names the injection screen rule on the input step, passed (flag) or refused', () => {
    const flagged = verificationSteps(entry(10, { screen: { rule: 'override-instructions' } }));
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
      }),
    );
    expect(refused.find((s) => s.step === 'input')).toMatchObject({
      state: 'fail',
      detail: 'INJECTION_DETECTED: refused (injection screen rule “exfiltrate-secrets”)',
    });
  });

  it('claims nothing for a verdict it does not know (a newer core)', () => {
    const steps = verificationSteps(entry(5, { verdict: 'quantum' as never }));
    expect(steps.every((s) => s.state === 'not-run')).toBe(true);
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
        })}
        onClose={vi.fn()}
      />,
    );
    const panel = screen.getByTestId('traffic-details');
    const states = within(panel)
      .getAllByTestId('verification-step')
      .map((step) => `${step.dataset.step}:${step.dataset.state}`);
    // The pipeline's own order (the core owns it): every step before the signature passed.
    const at = PIPELINE_STEPS.indexOf('signature');
    expect(states).toEqual(
      PIPELINE_STEPS.map((step, index) =>
        index < at ? `${step}:pass` : index === at ? `${step}:fail` : `${step}:not-run`,
      ),
    );
    expect(states).toContain('access:not-run');
    expect(states.slice(0, 2)).toEqual(['size:pass', 'shape:pass']);
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
