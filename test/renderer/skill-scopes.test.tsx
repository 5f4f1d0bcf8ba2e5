// @vitest-environment happy-dom
/**
 * Scopes on the Access page (issue 27, item 3): the skills an A2A key or a SAMVAD approval opens, every
 * public and approved one (no scope) or exactly those ticked; shown on each key and approval, chosen when a
 * key is issued, a sender approved (waiting or in advance), and changed on an approved sender. A scope of no
 * skill is refused before anything is sent; the console's refusals are shown. Fetch is scripted.
 */
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { Access } from '../../renderer/src/pages/Access';
import type { A2AKeysResponse, AccessResponse } from '../../src/protocol/console-api.js';
import {
  accessView,
  approvedSender,
  consoleData,
  fakeFetch,
  pendingSender,
  skillsView,
  skillView,
  status,
  type Reply,
  type Route,
} from './fakes';

afterEach(cleanup);

const WAITING = 'agent://research.example.org';
const ACME = 'agent://helper.acme.dev';
const PAPERS = 'agent://papers.example.net';

const SKILLS = skillsView([
  skillView('research', { setting: { name: 'Research' } }),
  skillView('ops', { setting: { name: 'Ops', audience: 'named' } }),
]);
const lists = (approved = [approvedSender(ACME), approvedSender(PAPERS, { skills: ['research', 'gone'] })]) =>
  accessView({ pending: [pendingSender(WAITING)], approved });
const NO_KEYS: A2AKeysResponse = { keys: [], defaults: { requestsPerMinute: 10, tokensPerDay: 100_000 } };

function setup(routes: Record<string, Reply | Route>) {
  const { fetch, calls } = fakeFetch({
    'GET /api/skills': { body: SKILLS },
    'GET /api/a2a/keys': { body: NO_KEYS },
    ...routes,
  });
  render(<Access api={createApiClient({ token: 't', fetch })} data={consoleData(status())} />);
  return { calls };
}

const posts = (calls: { method: string; path: string; body: unknown }[], path: string) =>
  calls.filter((call) => call.method === 'POST' && call.path === path).map((call) => call.body);
const row = (testId: string, sender: string) =>
  screen.getAllByTestId(testId).find((each) => each.dataset.sender === sender) as HTMLElement;
const approvedAnswer = (body: unknown): { body: AccessResponse & { tasks: number } } => {
  const { sender, skills } = body as { sender: string; skills?: string[] };
  return {
    body: { ...lists([approvedSender(sender, skills ? { skills } : {})]), pending: [], tasks: 0 },
  };
};

describe('SAMVAD approvals: their skills', () => {
  it('shows the skills of each approved sender: every public and approved one, or exactly those', async () => {
    setup({ 'GET /api/access': { body: lists() } });
    await screen.findAllByTestId('approved-row');
    expect(within(row('approved-row', ACME)).getByTestId('approved-skills').textContent).toBe(
      'every public and approved skill',
    );
    expect(within(row('approved-row', PAPERS)).getByTestId('approved-skills').textContent).toBe(
      'research, gone',
    );
  });

  it('approves a waiting sender for some skills only: exactly the ones ticked are sent', async () => {
    const { calls } = setup({
      'GET /api/access': { body: lists() },
      'POST /api/access/approve': ({ body }) => approvedAnswer(body),
    });
    await screen.findAllByTestId('pending-row');
    fireEvent.click(screen.getByRole('button', { name: `Approve ${WAITING} for some skills…` }));
    const dialog = within(screen.getByRole('dialog', { name: `Approve ${WAITING} for some skills` }));
    // None ticked: refused here, nothing sent.
    await act(async () => fireEvent.click(dialog.getByRole('button', { name: 'Approve' })));
    expect(posts(calls, '/api/access/approve')).toEqual([]);
    expect(dialog.getByTestId('skill-scope-error').textContent).toBe(
      'Tick at least one skill, or choose every public and approved skill.',
    );
    // A named skill says what naming it means.
    expect(dialog.getByRole('checkbox', { name: 'Ops ops' }).getAttribute('aria-describedby')).toBeTruthy();
    expect(screen.getByRole('dialog').textContent).toContain(
      'Named callers only: only a scope that names it opens it',
    );
    fireEvent.click(dialog.getByRole('checkbox', { name: 'Ops ops' }));
    fireEvent.click(dialog.getByRole('checkbox', { name: 'Research research' }));
    await act(async () => fireEvent.click(dialog.getByRole('button', { name: 'Approve' })));
    // In the order the skills are listed.
    expect(posts(calls, '/api/access/approve')).toEqual([{ sender: WAITING, skills: ['research', 'ops'] }]);
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(screen.getByTestId('access-result').textContent).toBe(
      `Approved ${WAITING}: its calls to research, ops go through from now on.`,
    );
    expect(within(row('approved-row', WAITING)).getByTestId('approved-skills').textContent).toBe(
      'research, ops',
    );
  });

  it('changes an approved sender’s skills, and back to every public and approved one', async () => {
    const { calls } = setup({
      'GET /api/access': { body: lists() },
      'POST /api/access/approve': ({ body }) => approvedAnswer(body),
    });
    await screen.findAllByTestId('approved-row');
    fireEvent.click(screen.getByRole('button', { name: `Skills ${PAPERS} may call…` }));
    const dialog = within(screen.getByRole('dialog', { name: `Skills ${PAPERS} may call` }));
    // Its skills now, ticked; one that is no longer a skill is said to be so.
    expect((dialog.getByRole('checkbox', { name: 'Research research' }) as HTMLInputElement).checked).toBe(
      true,
    );
    expect((dialog.getByRole('checkbox', { name: 'Ops ops' }) as HTMLInputElement).checked).toBe(false);
    expect(dialog.getByRole('checkbox', { name: 'gone not a skill now' })).toBeTruthy();
    fireEvent.click(dialog.getByRole('checkbox', { name: 'gone not a skill now' }));
    await act(async () => fireEvent.click(dialog.getByRole('button', { name: 'Save skills' })));
    expect(posts(calls, '/api/access/approve')).toEqual([{ sender: PAPERS, skills: ['research'] }]);
    expect(screen.getByTestId('access-result').textContent).toBe(
      `${PAPERS} may call research from its next call on.`,
    );

    fireEvent.click(screen.getByRole('button', { name: `Skills ${PAPERS} may call…` }));
    const again = within(screen.getByRole('dialog'));
    fireEvent.click(again.getByRole('radio', { name: 'Every public and approved skill' }));
    await act(async () => fireEvent.click(again.getByRole('button', { name: 'Save skills' })));
    expect(posts(calls, '/api/access/approve').at(-1)).toEqual({ sender: PAPERS });
    expect(within(row('approved-row', PAPERS)).getByTestId('approved-skills').textContent).toBe(
      'every public and approved skill',
    );
  });

  it('approves an agent in advance for some skills; the console’s refusal stays in view', async () => {
    let refuse = true;
    const { calls } = setup({
      'GET /api/access': { body: lists() },
      'POST /api/access/approve': ({ body }) =>
        refuse
          ? {
              status: 400,
              body: {
                error: {
                  message:
                    'Not approved: skills names "ops", which is not a skill of this agent: use chat, research.',
                  fix: 'Send {"sender": "agent://...", "skills": ["research"]}, or leave "skills" out.',
                },
              },
            }
          : approvedAnswer(body),
    });
    await screen.findAllByTestId('approved-row');
    const form = screen.getByLabelText('Approve an agent in advance').closest('form') as HTMLElement;
    fireEvent.change(screen.getByLabelText('Approve an agent in advance'), {
      target: { value: 'agent://new.example.com' },
    });
    fireEvent.click(within(form).getByRole('radio', { name: 'Only these skills' }));
    fireEvent.click(within(form).getByRole('checkbox', { name: 'Ops ops' }));
    await act(async () => fireEvent.click(within(form).getByRole('button', { name: 'Approve' })));
    expect(posts(calls, '/api/access/approve')).toEqual([
      { sender: 'agent://new.example.com', skills: ['ops'] },
    ]);
    expect(within(form).getByTestId('field-error').textContent).toContain(
      'which is not a skill of this agent',
    );
    // Nothing was lost: the id and the scope stay for another try.
    expect((screen.getByLabelText('Approve an agent in advance') as HTMLInputElement).value).toBe(
      'agent://new.example.com',
    );
    refuse = false;
    await act(async () => fireEvent.click(within(form).getByRole('button', { name: 'Approve' })));
    expect(screen.getByTestId('access-result').textContent).toBe(
      'Approved agent://new.example.com in advance: its calls to ops go through from the first one.',
    );
    expect(within(form).getByRole('radio', { name: 'Every public and approved skill' })).toHaveProperty(
      'checked',
      true,
    );
  });
});

describe('A2A keys: their skills', () => {
  it('issues a key scoped to exactly the skills ticked, none ticked is refused here; the scope shows on its row', async () => {
    const scoped = {
      id: '0123456789ab',
      name: 'Research bot',
      caller: 'a2a-key:0123456789ab',
      createdAt: new Date().toISOString(),
      limits: {},
      calls: 0,
      status: 'active' as const,
      skills: ['research'],
    };
    const { calls } = setup({
      'GET /api/access': { body: lists() },
      'POST /api/a2a/keys': {
        status: 201,
        body: { ...NO_KEYS, keys: [scoped], key: scoped, secret: `abk_0123456789ab_${'Q'.repeat(43)}` },
      },
    });
    const form = within(await screen.findByTestId('issue-key-form'));
    fireEvent.change(form.getByLabelText('Name of the agent it is for'), {
      target: { value: 'Research bot' },
    });
    fireEvent.click(form.getByRole('radio', { name: 'Only these skills' }));
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Issue key' })));
    expect(posts(calls, '/api/a2a/keys')).toEqual([]);
    expect(form.getByTestId('skill-scope-error').textContent).toBe(
      'Tick at least one skill, or choose every public and approved skill.',
    );
    fireEvent.click(form.getByRole('checkbox', { name: 'Research research' }));
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Issue key' })));
    expect(posts(calls, '/api/a2a/keys')).toEqual([{ name: 'Research bot', skills: ['research'] }]);
    const keyRow = screen.getAllByTestId('a2a-key-row')[0]!;
    expect(within(keyRow).getByTestId('a2a-key-skills').textContent).toBe('research');
    // The form starts again unscoped.
    expect(form.getByRole('radio', { name: 'Every public and approved skill' })).toHaveProperty(
      'checked',
      true,
    );
  });

  it('shows the console’s refusal of a scope under it', async () => {
    setup({
      'GET /api/access': { body: lists() },
      'POST /api/a2a/keys': {
        status: 400,
        body: {
          error: {
            message: 'The key was not issued: skills names "ops", which is not a skill of this agent.',
            fix: 'Correct the fields named and issue again.',
            fields: [
              {
                field: 'skills',
                message: 'names "ops", which is not a skill of this agent: use chat, research',
              },
            ],
          },
        },
      },
    });
    const form = within(await screen.findByTestId('issue-key-form'));
    fireEvent.change(form.getByLabelText('Name of the agent it is for'), { target: { value: 'Ops bot' } });
    fireEvent.click(form.getByRole('radio', { name: 'Only these skills' }));
    fireEvent.click(form.getByRole('checkbox', { name: 'Ops ops' }));
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Issue key' })));
    expect(form.getByTestId('skill-scope-error').textContent).toBe(
      'names "ops", which is not a skill of this agent: use chat, research',
    );
  });
});
