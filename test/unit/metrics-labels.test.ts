import { describe, expect, it } from 'vitest';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { envelopeLabels } from '../../src/metrics/labels.js';
import { PIPELINE_STEPS } from '../../src/protocol/console-api.js';
import { parseServeArgs } from '../../src/settings/flags.js';

const event = (fields: Partial<EnvelopeEvent>): EnvelopeEvent => ({
  time: '2026-01-01T00:00:00.000Z',
  endpoint: '/agent/message',
  signatureForm: 'headers',
  verdict: 'accepted',
  status: 200,
  durationMs: 1,
  bytesIn: 0,
  bytesOut: 0,
  ...fields,
});

describe('envelopeLabels', () => {
  it('accepted and held carry step "none"; a refusal names its pipeline step', () => {
    expect(envelopeLabels(event({ mode: 'sync' }))).toEqual({
      protocol: 'samvad',
      mode: 'sync',
      verdict: 'accepted',
      step: 'none',
    });
    expect(envelopeLabels(event({ mode: 'async', held: true }))).toEqual({
      protocol: 'samvad',
      mode: 'async',
      verdict: 'held',
      step: 'none',
    });
    for (const step of PIPELINE_STEPS) {
      expect(envelopeLabels(event({ mode: 'stream', verdict: step }))).toEqual({
        protocol: 'samvad',
        mode: 'stream',
        verdict: 'refused',
        step,
      });
    }
  });

  it('labels the protocol: an A2A call is "a2a", an entry without one SAMVAD\'s', () => {
    expect(envelopeLabels(event({ protocol: 'a2a', mode: 'stream' }))).toEqual({
      protocol: 'a2a',
      mode: 'stream',
      verdict: 'accepted',
      step: 'none',
    });
    expect(envelopeLabels(event({})).protocol).toBe('samvad');
  });

  it('maps what it does not know to "other", and no mode (outbound lookups) to "none"', () => {
    const odd = event({ mode: 'carrier-pigeon' as never, verdict: 'agent://attacker.example' as never });
    expect(envelopeLabels(odd)).toEqual({
      protocol: 'samvad',
      mode: 'other',
      verdict: 'refused',
      step: 'other',
    });
    expect(envelopeLabels(event({ protocol: 'pigeon' as never })).protocol).toBe('other');
    expect(envelopeLabels(event({ mode: undefined })).mode).toBe('none');
  });
});

describe('--metrics-no-auth', () => {
  it('is a switch, also set from AGENT_BRIDGE_METRICS_NO_AUTH; the flag wins', () => {
    expect(parseServeArgs([], {}).overrides.metricsNoAuth).toBeUndefined();
    expect(parseServeArgs(['--metrics-no-auth'], {}).overrides.metricsNoAuth).toBe(true);
    for (const [text, on] of [
      ['1', true],
      ['true', true],
      ['0', false],
      ['false', false],
    ] as const) {
      expect(parseServeArgs([], { AGENT_BRIDGE_METRICS_NO_AUTH: text }).overrides.metricsNoAuth).toBe(on);
    }
    expect(
      parseServeArgs(['--metrics-no-auth'], { AGENT_BRIDGE_METRICS_NO_AUTH: '0' }).overrides.metricsNoAuth,
    ).toBe(true);
    expect(() => parseServeArgs([], { AGENT_BRIDGE_METRICS_NO_AUTH: 'maybe' })).toThrow(
      'AGENT_BRIDGE_METRICS_NO_AUTH: must be 1, true, 0 or false (got "maybe")',
    );
  });
});
