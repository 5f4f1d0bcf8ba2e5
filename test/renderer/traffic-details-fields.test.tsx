// @vitest-environment happy-dom
/**
 * Issue 16, item 2: every field a Traffic entry carries is shown in its details pane. The table below names
 * each field of TrafficEntry with what the operator sees for it; a field added to the entry fails to compile
 * here until the pane shows it and this table says how.
 */
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { TrafficDetails } from '../../renderer/src/components/TrafficDetails';
import { formatBytes, formatDateTime, formatMs } from '../../renderer/src/lib/format';
import { ADMISSION_LABELS } from '../../renderer/src/traffic/steps';
import type { TrafficEntry } from '../../src/protocol/console-api.js';
import { entry } from './fakes';

afterEach(cleanup);

const incoming: TrafficEntry = entry(7, {
  code: 'AGENT_UNAVAILABLE',
  status: 502,
  verdict: 'accepted',
  message: 'the gateway broke off',
  forwardedFor: '203.0.113.7',
  diagnosis: 'The gateway closed the connection: restart it.',
  taskId: 'task-7f3a',
  preview: { payload: '{"message":"hi there"}', reply: 'hello back' },
  screen: { rule: 'ignore-instructions' },
  admittedBy: 'approved',
  held: true,
  direction: 'in',
  onBehalfOf: 'agent://issuer.example',
  chain: { id: 'chain-7f3a-0001', hop: 3 },
  protocol: 'a2a',
  a2a: {
    method: 'SendMessage',
    version: '0.3',
    transport: 'rest',
    taskState: 'input-required',
    contextId: 'ctx-42',
  },
  callerName: 'Research bot',
  keyStatus: 'revoked',
  mode: 'async',
  signatureForm: 'both',
  passed: ['key', 'request', 'limits', 'screen'],
  files: [
    { name: 'notes.md', type: 'text/markdown', bytes: 13 },
    { name: 'cat.png', type: 'image/png', bytes: 2048, fetched: true },
  ],
});

const outgoing: TrafficEntry = entry(8, {
  direction: 'out',
  sender: 'agent://demo.example',
  callee: 'agent://weather.example',
  replySignature: 'unsigned',
});

type Shown = (pane: HTMLElement, entry: TrafficEntry) => void;
const text = (value: (entry: TrafficEntry) => string | undefined): Shown => {
  return (pane, e) => expect(pane.textContent).toContain(value(e));
};
const testId = (id: string): Shown => {
  return () => expect(screen.getByTestId(id)).toBeTruthy();
};

/**
 * Each field, and how the pane shows it; `out` fields are checked on a call out, the others on a call in.
 */
const SHOWN: { [K in keyof TrafficEntry]-?: { check: Shown; out?: true } } = {
  id: { check: text((e) => `Call #${e.id}`) },
  time: { check: text((e) => formatDateTime(e.time)) },
  endpoint: { check: text((e) => e.endpoint) },
  sender: { check: text((e) => e.sender) },
  skill: { check: text((e) => e.skill) },
  mode: { check: text((e) => e.mode) },
  signatureForm: { check: text((e) => e.signatureForm) },
  verdict: { check: text(() => 'held for approval') },
  code: { check: text((e) => e.code) },
  status: { check: text((e) => String(e.status)) },
  message: { check: text((e) => e.message) },
  durationMs: { check: text((e) => formatMs(e.durationMs)) },
  bytesIn: { check: text((e) => `${formatBytes(e.bytesIn)} in`) },
  bytesOut: { check: text((e) => `${formatBytes(e.bytesOut)} out`) },
  traceId: { check: text((e) => e.traceId) },
  forwardedFor: { check: text((e) => e.forwardedFor) },
  diagnosis: { check: text((e) => e.diagnosis) },
  taskId: { check: text((e) => e.taskId) },
  preview: { check: text((e) => e.preview?.payload) },
  screen: { check: text((e) => e.screen?.rule) },
  admittedBy: { check: text((e) => ADMISSION_LABELS[e.admittedBy!]) },
  held: { check: testId('held-note') },
  direction: { check: testId('details-direction') },
  callee: { check: text((e) => e.callee), out: true },
  replySignature: { check: testId('reply-signature'), out: true },
  onBehalfOf: { check: text((e) => e.onBehalfOf) },
  chain: { check: text((e) => `hop ${e.chain?.hop} of ${e.chain?.id} (as the caller said)`) },
  protocol: {
    check: (_pane, e) => expect(screen.getByTestId('details-protocol').dataset.protocol).toBe(e.protocol),
  },
  a2a: {
    check: (pane) => {
      expect(screen.getByTestId('a2a-method').textContent).toBe('SendMessage');
      expect(screen.getByTestId('a2a-wire').textContent).toBe('v0.3, HTTP+JSON');
      expect(screen.getByTestId('a2a-task-state').textContent).toBe('input-required');
      expect(pane.textContent).toContain('ctx-42');
    },
  },
  callerName: {
    check: () => expect(screen.getByTestId('caller-name').textContent).toContain('Research bot'),
  },
  keyStatus: {
    check: () => {
      expect(screen.getByTestId('key-status').dataset.status).toBe('revoked');
      expect(screen.getByTestId('key-status').textContent).toMatch(
        /revoked Its holder still calls with this key/,
      );
    },
  },
  files: {
    check: () => {
      const files = screen.getAllByTestId('traffic-file').map((item) => item.textContent);
      expect(files).toEqual(['notes.md text/markdown, 13 B', 'cat.png image/png, 2.0 KB fetched from a URL']);
    },
  },
  passed: {
    check: (pane, e) => {
      const ticked = [...pane.querySelectorAll<HTMLElement>('[data-testid="verification-step"]')]
        .filter((step) => step.dataset.state === 'pass')
        .map((step) => step.dataset.step);
      expect(ticked).toEqual(e.passed);
    },
  },
};

describe('the details pane', () => {
  it.each(Object.entries(SHOWN))('shows %s', (name, { check, out }) => {
    const shown = out ? outgoing : incoming;
    expect(shown[name as keyof TrafficEntry], `the fixture sets ${name}`).not.toBeUndefined();
    render(<TrafficDetails entry={shown} onClose={() => undefined} />);
    check(screen.getByTestId('traffic-details'), shown);
  });

  it('shows the reply preview too, and says on whose behalf the caller acted', () => {
    render(<TrafficDetails entry={incoming} onClose={() => undefined} />);
    expect(screen.getByTestId('traffic-details').textContent).toContain('hello back');
    expect(screen.getByTestId('on-behalf-of').textContent).toContain('agent://issuer.example');
    expect(screen.getByTestId('screen-rule').textContent).toContain('flagged, let through');
    expect(screen.getByTestId('admitted-by').dataset.rule).toBe('approved');
  });
});
