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
      verificationSteps(entry(3, { verdict: 'nonce', code: 'REPLAY_DETECTED', status: 409 }))[6]?.detail,
    ).toBe('REPLAY_DETECTED');
    expect(verificationSteps(entry(4, { verdict: 'size', status: 413 }))[0]?.detail).toBe('HTTP 413');
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
    expect(states).toEqual([
      'size:pass',
      'shape:pass',
      'signature:fail',
      'timestamp:not-run',
      'trust:not-run',
      'rate-limit:not-run',
      'nonce:not-run',
      'skill:not-run',
      'input:not-run',
      'handler:not-run',
    ]);
    expect(within(panel).getByText('AUTH_FAILED: signature does not verify')).toBeTruthy();
    expect(within(panel).getByText('203.0.113.9')).toBeTruthy();
    expect(within(panel).getByText('trace-7')).toBeTruthy();
    expect(within(panel).getByText('the body changed after signing')).toBeTruthy();
    expect(within(panel).getByText('3 ms')).toBeTruthy();
    expect(within(panel).getByText(/Not kept: turn on “Keep message contents”/)).toBeTruthy();
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
