// @vitest-environment happy-dom
/** The Overview's A2A card: the agent card's address with a copy button, the live keys and the way to them. */
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { A2ACard } from '../../renderer/src/components/A2ACard';
import { pageHref } from '../../renderer/src/pages/types';

afterEach(cleanup);

const CARD = 'https://demo.example/.well-known/agent-card.json';

describe('the A2A card', () => {
  it('shows the agent card URL with a copy button, and the live keys with a link to Access', () => {
    render(<A2ACard a2a={{ cardUrl: CARD, keys: 3 }} />);
    const card = screen.getByTestId('a2a-card');
    expect(screen.getByTestId('a2a-card-url').textContent).toBe(CARD);
    expect(within(card).getByRole('button', { name: 'Copy A2A agent card URL' })).toBeTruthy();
    expect(screen.getByTestId('a2a-key-count').dataset.count).toBe('3');
    expect(screen.getByTestId('a2a-key-count').textContent).toContain('3 live keys');
    const link = screen.getByTestId('a2a-keys-link');
    expect(link.getAttribute('href')).toBe(pageHref('access'));
    expect(link.textContent).toBe('Manage keys');
  });

  it('says when there is no public address yet, and when no key is live', () => {
    render(<A2ACard a2a={{ cardUrl: null, keys: 0 }} />);
    expect(screen.queryByTestId('a2a-card-url')).toBeNull();
    expect(screen.getByTestId('a2a-card-url-none').textContent).toContain('No public address yet');
    expect(screen.queryByRole('button', { name: 'Copy A2A agent card URL' })).toBeNull();
    expect(screen.getByTestId('a2a-key-count').textContent).toContain('No live key');
    expect(screen.getByTestId('a2a-keys-link').textContent).toBe('Issue a key');
  });

  it('says the key count is unknown, and why, when the key store cannot be read (not "no live key")', () => {
    render(
      <A2ACard
        a2a={{ cardUrl: CARD, keys: null, keysProblem: 'Cannot count the A2A keys: Redis does not answer.' }}
      />,
    );
    const count = screen.getByTestId('a2a-key-count');
    expect(count.dataset.count).toBe('unknown');
    expect(count.textContent).toContain('Redis does not answer');
    expect(count.textContent).not.toContain('No live key');
    expect(screen.getByTestId('a2a-card').textContent).toContain('keys unknown');
  });
});
