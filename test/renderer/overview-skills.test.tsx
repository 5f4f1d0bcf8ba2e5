// @vitest-environment happy-dom
/** The Overview's Skills card: how many skills are published and public, how many refuse their callers now. */
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { Overview } from '../../renderer/src/pages/Overview';
import { pageHref } from '../../renderer/src/pages/types';
import { consoleData, fakeFetch, status } from './fakes';

afterEach(cleanup);

function showOverview(skills: { published: number; public: number; notServing: number }) {
  const { fetch } = fakeFetch({});
  render(<Overview api={createApiClient({ token: 't', fetch })} data={consoleData(status({ skills }))} />);
  return screen.getByTestId('skills-summary');
}

describe('the Overview’s Skills card', () => {
  it('says how many skills are published and how many are public, with the way to the Skills page', () => {
    const card = showOverview({ published: 4, public: 2, notServing: 0 });
    expect(within(card).getByTestId('skills-published').textContent).toBe('4');
    expect(within(card).getByTestId('skills-public').textContent).toBe('2');
    expect(within(card).getByTestId('skills-not-serving').className).not.toContain('bad');
    expect(within(card).getByTestId('skills-summary-text').textContent).toBe(
      '2 skills are public: anyone your access policy admits may call them, with no tools or web tools only.',
    );
    expect(within(card).getByRole('link', { name: 'Open Skills' }).getAttribute('href')).toBe(
      pageHref('skills'),
    );
  });

  it('says when no skill is public, and when one refuses its callers', () => {
    const card = showOverview({ published: 2, public: 0, notServing: 1 });
    expect(within(card).getByTestId('skills-not-serving').className).toContain('bad');
    expect(within(card).getByTestId('skills-summary-text').textContent).toBe(
      'No skill is public: only callers you approved or gave a key reach any. One skill refuses its callers now: the Skills page says why.',
    );
  });
});
