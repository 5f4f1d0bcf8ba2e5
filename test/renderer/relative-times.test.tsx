// @vitest-environment happy-dom
/**
 * Times relative to now (issue 26, item 12): something that has happened reads as past even when the console's
 * clock runs a few seconds ahead of the browser's, and what a page shows keeps up with the clock while it is open.
 */
import { act, cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { A2AKeysCard } from '../../renderer/src/components/A2AKeysCard';
import { When } from '../../renderer/src/components/When';
import { formatRelative } from '../../renderer/src/lib/format';
import type { A2AKeysResponse } from '../../src/protocol/console-api.js';
import { fakeFetch } from './fakes';

const NOW = Date.parse('2026-12-07T12:00:00Z');
const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();

describe('formatRelative', () => {
  it.each([
    [-10_000, 'any', 'less than a minute ago'],
    [-10_000, 'past', 'less than a minute ago'],
    [10_000, 'any', 'in less than a minute'],
    // The console's clock is 10 s ahead: a key created "now" there is 10 s in this browser's future.
    [10_000, 'past', 'less than a minute ago'],
    [150_000, 'past', 'less than a minute ago'],
    [-120_000, 'past', '2 min ago'],
    [-5 * 3600_000, 'past', '5 h ago'],
    [23 * 3600_000, 'any', 'in 23 h'],
    [-3 * 86_400_000, 'any', '3 d ago'],
  ] as const)('%i ms from now (%s): "%s"', (offset, tense, text) => {
    expect(formatRelative(at(offset), NOW, tense)).toBe(text);
  });

  it('never says "just now", which reads the same two minutes later', () => {
    for (const offset of [0, -1000, -44_000]) expect(formatRelative(at(offset), NOW)).not.toMatch(/just now/);
  });
});

describe('what a page shows keeps up with the clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: false });
    vi.setSystemTime(NOW);
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('When says past for a past event stamped in the future', () => {
    render(<When iso={at(5000)} now={NOW} past />);
    expect(screen.getByText(/ago/).textContent).toMatch(/^less than a minute ago \(/);
  });

  it('"Last used" of an A2A key reads "2 min ago" two minutes after its use, with nothing else changing', async () => {
    const keys: A2AKeysResponse = {
      keys: [
        {
          id: '0123456789ab',
          name: 'Research agent',
          caller: 'a2a-key:0123456789ab',
          // Stamped by a console whose clock is 3 s ahead.
          createdAt: at(3000),
          lastUsedAt: at(3000),
          limits: {},
          calls: 1,
          status: 'active',
        },
      ],
      defaults: { requestsPerMinute: 10, tokensPerDay: 100_000 },
    };
    const { fetch } = fakeFetch({ 'GET /api/a2a/keys': { body: keys } });
    render(<A2AKeysCard api={createApiClient({ token: 't', fetch })} version={0} policy="pairing" />);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(10);
    });
    const lastUsed = () =>
      within(screen.getByTestId('a2a-key-row')).getAllByRole('cell')[1]?.textContent ?? '';
    expect(lastUsed()).toMatch(/^less than a minute ago \(/);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(2 * 60_000 + 3000);
    });
    expect(lastUsed()).toMatch(/^2 min ago \(/);
  });
});
