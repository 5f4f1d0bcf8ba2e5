// @vitest-environment happy-dom
/**
 * The Skills page (issue 27, item 5): each skill with its agent, class, tools, audience, limits, use today and
 * how callers reach it; adding one from a template (its config proposed, checked again until its class is
 * the one intended, only the audiences that class allows); editing, pausing, removing and accepting a host
 * skill's exact tools. The console is a scripted fetch; its real API has its own tests.
 */
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../../renderer/src/api/client';
import { Skills } from '../../renderer/src/pages/Skills';
import type { SkillSnippetResponse, SkillsResponse, SkillView } from '../../src/protocol/console-api.js';
import { consoleData, fakeFetch, skillsView, skillView, status, type Reply, type Route } from './fakes';

let copied: string[] = [];
beforeEach(() => {
  copied = [];
  vi.stubGlobal('navigator', {
    ...navigator,
    clipboard: { writeText: async (text: string) => void copied.push(text) },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const RESEARCH = skillView('research', {
  setting: {
    name: 'Research',
    description: 'Searches the web.',
    examples: ['What changed in Node 22?'],
    limits: { requestsPerMinute: 5 },
  },
  tools: {
    class: 'web',
    tools: ['web_fetch', 'web_search'],
    detail: 'Agent research: web search and fetch only.',
  },
  limits: { requestsPerMinute: 5, tokensPerDay: 100_000 },
  today: { calls: 37, tokens: 152_977 },
});
const CODER = skillView('code-runner', {
  setting: { agent: 'coder' },
  tools: {
    class: 'sandboxed',
    tools: ['exec', 'read'],
    detail: 'Agent coder runs exec, read only in its sandbox.',
    sandbox: { mode: 'all', workspaceAccess: 'none', network: 'none' },
  },
});
const OPS = skillView('ops', {
  setting: { audience: 'named' },
  tools: {
    class: 'host',
    tools: ['exec', 'process', 'read'],
    detail: 'Agent ops reaches this machine: exec.',
  },
  widest: 'host',
  acceptance: { state: 'needed' },
  serving: {
    serving: false,
    reason: 'acceptance-needed',
    message: 'Skill "ops" reaches this machine and you have not accepted that.',
    fix: 'Accept the skill with exactly these tools on the Skills page.',
  },
});
const PAUSED = skillView('summary', { setting: { paused: true, audience: 'public' }, a2aCardUrl: null });

function setup(routes: Record<string, Reply | Route>, data = consoleData(status())) {
  const { fetch, calls } = fakeFetch(routes);
  const api = createApiClient({ token: 't', fetch });
  const view = render(<Skills api={api} data={data} />);
  return { calls, view, api, data };
}

const card = (id: string) =>
  screen.getAllByTestId('skill-card').find((each) => each.dataset.skill === id) as HTMLElement;
const posted = (calls: { method: string; path: string; body: unknown }[], method: string, path: string) =>
  calls.filter((call) => call.method === method && call.path === path).map((call) => call.body);

describe('Skills page: the list', () => {
  it('lists chat first, built in, then each skill: agent, class and tools, audience, limits, budget, today', async () => {
    setup({ 'GET /api/skills': { body: skillsView([RESEARCH, CODER, OPS, PAUSED]) } });
    const cards = await screen.findAllByTestId('skill-card');
    expect(cards.map((each) => each.dataset.skill)).toEqual([
      'chat',
      'research',
      'code-runner',
      'ops',
      'summary',
    ]);
    expect(cards.map((each) => each.dataset.state)).toEqual([
      'serving',
      'serving',
      'serving',
      'not-serving',
      'paused',
    ]);

    const research = within(card('research'));
    expect(research.getByRole('heading', { level: 2 }).textContent).toBe('Research (research)');
    expect(research.getByText('“What changed in Node 22?”')).toBeTruthy();
    expect(research.getByTestId('skill-class').textContent).toBe('web web search and fetch');
    expect(research.getByTestId('skill-tools').textContent).toBe('web_fetchweb_search');
    expect(card('research').textContent).toContain('openclaw/research');
    expect(card('research').textContent).toContain('Approved callers (tools up to sandboxed)');
    // Its own limit, and the default budget said to be one.
    expect(card('research').textContent).toContain('5 requests a minute per caller');
    expect(card('research').textContent).not.toContain('5 requests a minute per caller (default)');
    expect(card('research').textContent).toContain('100,000 tokens a day per caller (default)');
    expect(research.getByTestId('skill-today').textContent).toBe('37 calls, 152,977 tokens');

    // The sandbox facts a sandboxed class rests on.
    expect(within(card('code-runner')).getByTestId('skill-sandbox').textContent).toBe(
      'Sandbox: mode “all”, workspace access “none”, network “none”',
    );
    // Not serving: why, and the fix.
    const refused = within(card('ops')).getByTestId('skill-not-serving');
    expect(refused.textContent).toContain('you have not accepted that');
    expect(refused.textContent).toContain('Fix: Accept the skill with exactly these tools');
    expect(screen.getByTestId('skills-count').textContent).toBe('4 published, 1 public.');
  });

  it('chat cannot be paused, removed or edited here: Settings holds its agent', async () => {
    setup({ 'GET /api/skills': { body: skillsView([RESEARCH]) } });
    await screen.findAllByTestId('skill-card');
    const chat = within(card('chat'));
    expect(chat.queryByRole('button', { name: /Remove|Pause|Edit/ })).toBeNull();
    expect(chat.getByRole('link', { name: 'Change in Settings' }).getAttribute('href')).toBe(
      '#/settings/gateway',
    );
    expect(within(card('research')).getByRole('button', { name: 'Remove research…' })).toBeTruthy();
  });

  it('shows how callers reach each skill, with copy buttons: its SAMVAD id and its A2A card', async () => {
    setup({ 'GET /api/skills': { body: skillsView([RESEARCH, PAUSED]) } });
    await screen.findAllByTestId('skill-card');
    const research = within(card('research'));
    expect(research.getByTestId('skill-samvad-id').textContent).toBe('research');
    const url = 'https://demo.example/a2a/skills/research/.well-known/agent-card.json';
    expect(research.getByTestId('skill-card-url').textContent).toBe(url);
    expect(card('research').textContent).toContain(
      'createFromUrl("https://demo.example/a2a/skills/research/")',
    );
    await act(async () =>
      fireEvent.click(research.getByRole('button', { name: 'Copy the SAMVAD skill id research' })),
    );
    await act(async () =>
      fireEvent.click(research.getByRole('button', { name: 'Copy the A2A card URL of research' })),
    );
    expect(copied).toEqual(['research', url]);
    // Chat's card is the agent's own; a paused skill has none.
    expect(within(card('chat')).getByTestId('skill-card-url').textContent).toBe(
      'https://demo.example/.well-known/agent-card.json',
    );
    expect(within(card('summary')).getByTestId('skill-card-url-none').textContent).toContain('paused');
  });

  it('reloads when the console says the skills changed', async () => {
    let skills = [RESEARCH];
    const { view, api, data } = setup({ 'GET /api/skills': () => ({ body: skillsView(skills) }) });
    expect(await screen.findAllByTestId('skill-card')).toHaveLength(2);
    skills = [RESEARCH, CODER];
    view.rerender(<Skills api={api} data={{ ...data, skillsVersion: 1 }} />);
    await waitFor(() => expect(screen.getAllByTestId('skill-card')).toHaveLength(3));
  });
});

/** What POST /api/skills/snippet answers for the research template, at each check. */
function proposal(state: 'not-applied' | 'as-intended' | 'defeated'): SkillSnippetResponse {
  const applied = state !== 'not-applied';
  const toolClass = state === 'as-intended' ? 'web' : 'host';
  return {
    template: 'research',
    agent: 'web-research',
    snippet: `{\n  agents: { entries: { "web-research": { tools: { allow: ["web_search", "web_fetch"] } } } },\n}`,
    expectedClass: 'web',
    mergeInto: '/home/op/.openclaw/openclaw.json',
    roster: 'file',
    declared: applied,
    agentCheck: {
      agent: 'web-research',
      model: 'openclaw/web-research',
      check: applied ? 'present' : 'missing',
      checkedAt: '2025-01-01T12:00:00Z',
    },
    tools: {
      class: toolClass,
      tools: applied ? ['web_fetch', 'web_search'] : [],
      detail: state === 'defeated' ? 'web_fetch may reach your own network (ssrfPolicy).' : 'ok',
    },
    outcome: {
      state,
      message:
        state === 'not-applied'
          ? 'Agent "web-research" is not in your OpenClaw config yet: merge the config above, then check again.'
          : state === 'as-intended'
            ? 'Agent "web-research" is web, as the template intends: web_fetch, web_search.'
            : 'Your OpenClaw config makes agent "web-research" host, not web as the template intends. web_fetch may reach your own network (ssrfPolicy).',
    },
  };
}

const ADDED = skillView('web-research', {
  setting: { name: 'Web research', description: 'Searches the web.', audience: 'public' },
  tools: { class: 'web', tools: ['web_fetch', 'web_search'], detail: 'web' },
  widest: 'web',
});

async function openAddForm() {
  await screen.findAllByTestId('skill-card');
  fireEvent.click(screen.getByRole('button', { name: 'Add a skill' }));
  const form = within(screen.getByTestId('skill-form'));
  fireEvent.change(form.getByLabelText('Id', { exact: true }), { target: { value: 'web-research' } });
  fireEvent.change(form.getByLabelText('Name', { exact: true }), { target: { value: 'Web research' } });
  fireEvent.change(form.getByLabelText('Description'), { target: { value: 'Searches the web.' } });
  return form;
}

const audience = (value: string) =>
  screen.getByTestId(`audience-${value}`).querySelector('input') as HTMLInputElement;

describe('Skills page: adding a skill', () => {
  it('proposes the template’s config, checks again until the agent is web, offers only what web allows, and adds it', async () => {
    let answers = [proposal('not-applied'), proposal('as-intended')];
    let added: SkillsResponse = skillsView([RESEARCH]);
    const { calls } = setup({
      'GET /api/skills': () => ({ body: added }),
      'POST /api/skills/snippet': () => ({ body: answers.shift() }),
      'POST /api/skills': () => {
        added = skillsView([RESEARCH, ADDED]);
        return { status: 201, body: added };
      },
    });
    const form = await openAddForm();
    // Before its agent is checked, no audience is offered: they depend on its tools.
    expect(['public', 'approved', 'named'].map((value) => audience(value).disabled)).toEqual([
      true,
      true,
      true,
    ]);
    expect(screen.getByTestId('audience-unknown').textContent).toContain('Check its agent first');

    // The agent is named for the skill until the operator names it otherwise.
    expect((form.getByLabelText('OpenClaw agent') as HTMLInputElement).value).toBe('web-research');
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Propose the config' })));
    expect(posted(calls, 'POST', '/api/skills/snippet')).toEqual([
      { template: 'research', agent: 'web-research' },
    ]);
    expect(screen.getByTestId('skill-snippet').textContent).toContain('allow: ["web_search", "web_fetch"]');
    expect(screen.getByTestId('skill-merge-into').textContent).toBe('/home/op/.openclaw/openclaw.json');
    await act(async () =>
      fireEvent.click(form.getByRole('button', { name: 'Copy the skill’s agent config' })),
    );
    expect(copied).toEqual([proposal('not-applied').snippet]);
    expect(screen.getByTestId('intended-class').dataset.class).toBe('web');
    expect(screen.getByTestId('actual-class').dataset.class).toBe('host');
    expect(screen.getByTestId('skill-agent-outcome').dataset.state).toBe('not-applied');
    // Host until it is in the config: named callers only, and why the others are not offered.
    expect(['public', 'approved', 'named'].map((value) => audience(value).disabled)).toEqual([
      true,
      true,
      false,
    ]);
    expect(within(screen.getByTestId('audience-public')).getByTestId('audience-why').textContent).toBe(
      'Not for this agent: it is host (reaches this machine), and a public skill may reach web tools at most (web search and fetch).',
    );
    expect(audience('public').getAttribute('aria-describedby')).toContain('-why');
    expect(screen.getByTestId('audience-note').textContent).toContain(
      'Until the gateway runs its agent as proposed, it counts as host',
    );

    // Merged, reloaded: checked again.
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Check again' })));
    expect(posted(calls, 'POST', '/api/skills/snippet')).toHaveLength(2);
    expect(screen.getByTestId('actual-class').dataset.class).toBe('web');
    expect(screen.getByTestId('skill-agent-outcome').textContent).toContain('As the template intends');
    expect(['public', 'approved', 'named'].map((value) => audience(value).disabled)).toEqual([
      false,
      false,
      false,
    ]);
    expect(screen.queryByTestId('audience-note')).toBeNull();
    fireEvent.click(audience('public'));
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Add skill' })));
    expect(posted(calls, 'POST', '/api/skills')).toEqual([
      {
        id: 'web-research',
        name: 'Web research',
        description: 'Searches the web.',
        examples: [],
        agent: 'web-research',
        audience: 'public',
        limits: {},
      },
    ]);
    expect(screen.queryByTestId('skill-form')).toBeNull();
    expect(screen.getByTestId('skills-result').textContent).toContain('Added “Web research” (web-research)');
    expect(card('web-research').dataset.class).toBe('web');
    answers = [];
  });

  it('says plainly when the operator’s own config defeated the template, and why', async () => {
    const answers = [proposal('not-applied'), proposal('defeated')];
    setup({
      'GET /api/skills': { body: skillsView() },
      'POST /api/skills/snippet': () => ({ body: answers.shift() }),
    });
    const form = await openAddForm();
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Propose the config' })));
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Check again' })));
    const outcome = screen.getByTestId('skill-agent-outcome');
    expect(outcome.dataset.state).toBe('defeated');
    expect(outcome.textContent).toContain('Your config defeated the template');
    expect(outcome.textContent).toContain('makes agent "web-research" host, not web as the template intends');
    expect(outcome.textContent).toContain('ssrfPolicy');
    expect(screen.getByTestId('intended-class').dataset.class).toBe('web');
    expect(screen.getByTestId('actual-class').dataset.class).toBe('host');
  });

  it('a new template, agent or sandbox choice drops the proposal (it was for another config)', async () => {
    setup({
      'GET /api/skills': { body: skillsView() },
      'POST /api/skills/snippet': { body: proposal('not-applied') },
    });
    const form = await openAddForm();
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Propose the config' })));
    expect(screen.getByTestId('agent-proposal')).toBeTruthy();
    fireEvent.click(within(screen.getByTestId('template-sandboxed')).getByRole('radio'));
    expect(screen.queryByTestId('agent-proposal')).toBeNull();
    // The sandboxed helper asks for its runtime and whether its sandbox may reach the network.
    expect(form.getByLabelText('Container runtime')).toBeTruthy();
    expect(form.getByLabelText('Let its sandbox reach the network')).toBeTruthy();
  });

  it('shows the console’s refusal under the field it names', async () => {
    setup({
      'GET /api/skills': { body: skillsView() },
      'POST /api/skills/snippet': { body: proposal('as-intended') },
      'POST /api/skills': {
        status: 409,
        body: {
          error: {
            message: 'There is a skill "web-research" already; nothing was added.',
            fix: 'Choose another id.',
            fields: [{ field: 'id', message: 'is taken by another skill' }],
          },
        },
      },
    });
    const form = await openAddForm();
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Propose the config' })));
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Add skill' })));
    const id = form.getByLabelText('Id', { exact: true });
    expect(id.getAttribute('aria-invalid')).toBe('true');
    expect(document.getElementById(id.getAttribute('aria-describedby')!)?.textContent).toBe(
      'is taken by another skill',
    );
  });

  it('asks for what is missing before anything is sent', async () => {
    const { calls } = setup({ 'GET /api/skills': { body: skillsView() } });
    await screen.findAllByTestId('skill-card');
    fireEvent.click(screen.getByRole('button', { name: 'Add a skill' }));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Add skill' })));
    expect(calls.filter((call) => call.method !== 'GET')).toEqual([]);
    const errors = screen.getAllByTestId('field-error').map((each) => each.textContent);
    expect(errors).toContain(
      'Lower case letters, digits and dashes, starting with a letter or digit (at most 40).',
    );
    expect(errors).toContain('Name the skill: callers see it on the cards.');
  });
});

describe('Skills page: changing a skill', () => {
  const routes = (skills: SkillView[], extra: Record<string, Reply | Route> = {}) => ({
    'GET /api/skills': { body: skillsView(skills) },
    ...extra,
  });

  it('edits only what changed', async () => {
    const renamed = skillsView([
      skillView('research', { ...RESEARCH, setting: { ...RESEARCH.setting, name: 'Deep research' } }),
    ]);
    const { calls } = setup(routes([RESEARCH], { 'PUT /api/skills/research': { body: renamed } }));
    await screen.findAllByTestId('skill-card');
    fireEvent.click(within(card('research')).getByRole('button', { name: 'Edit research' }));
    const form = within(screen.getByTestId('skill-form'));
    // Its agent is unchanged: the audiences its class allows are offered as they are.
    expect(audience('public').disabled).toBe(false);
    fireEvent.change(form.getByLabelText('Name', { exact: true }), { target: { value: 'Deep research' } });
    await act(async () => fireEvent.click(form.getByRole('button', { name: 'Save changes' })));
    expect(posted(calls, 'PUT', '/api/skills/research')).toEqual([{ name: 'Deep research' }]);
    expect(screen.getByTestId('skills-result').textContent).toBe('Saved “Deep research”.');
  });

  it('pauses and resumes', async () => {
    const paused = skillsView([
      skillView('research', { ...RESEARCH, setting: { ...RESEARCH.setting, paused: true } }),
    ]);
    const { calls } = setup(routes([RESEARCH], { 'PUT /api/skills/research': { body: paused } }));
    await screen.findAllByTestId('skill-card');
    await act(async () =>
      fireEvent.click(within(card('research')).getByRole('button', { name: 'Pause research' })),
    );
    expect(posted(calls, 'PUT', '/api/skills/research')).toEqual([{ paused: true }]);
    expect(card('research').dataset.state).toBe('paused');
    expect(within(card('research')).getByRole('button', { name: 'Resume research' })).toBeTruthy();
  });

  it('removes after a confirmation; Cancel removes nothing', async () => {
    const { calls } = setup(routes([RESEARCH], { 'DELETE /api/skills/research': { body: skillsView() } }));
    await screen.findAllByTestId('skill-card');
    fireEvent.click(within(card('research')).getByRole('button', { name: 'Remove research…' }));
    let dialog = screen.getByRole('dialog', { name: 'Remove the skill “Research”?' });
    expect(dialog.textContent).toContain('A2A callers of its card get 404');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(posted(calls, 'DELETE', '/api/skills/research')).toEqual([]);

    fireEvent.click(within(card('research')).getByRole('button', { name: 'Remove research…' }));
    dialog = screen.getByRole('dialog');
    await act(async () => fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' })));
    expect(posted(calls, 'DELETE', '/api/skills/research')).toHaveLength(1);
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(screen.getAllByTestId('skill-card').map((each) => each.dataset.skill)).toEqual(['chat']);
  });

  it('accepts a host skill with exactly the tools shown; asked again when they changed', async () => {
    const accepted = skillView('ops', {
      ...OPS,
      setting: {
        ...OPS.setting,
        accepted: { tools: ['exec', 'process', 'read'], at: '2025-01-02T00:00:00Z' },
      },
      acceptance: { state: 'accepted', at: '2025-01-02T00:00:00Z' },
      serving: { serving: true },
    });
    const { calls } = setup(
      routes([OPS], { 'POST /api/skills/ops/accept': { body: skillsView([accepted]) } }),
    );
    await screen.findAllByTestId('skill-card');
    fireEvent.click(within(card('ops')).getByRole('button', { name: 'Accept the tools of ops…' }));
    const dialog = screen.getByRole('dialog', { name: 'Let the callers of “Ops” reach this machine?' });
    expect(within(dialog).getByTestId('accept-tools').textContent).toBe('execprocessread');
    await act(async () =>
      fireEvent.click(within(dialog).getByRole('button', { name: 'Accept these tools' })),
    );
    expect(posted(calls, 'POST', '/api/skills/ops/accept')).toEqual([{ tools: ['exec', 'process', 'read'] }]);
    expect(card('ops').dataset.state).toBe('serving');
    expect(within(card('ops')).queryByRole('button', { name: 'Accept the tools of ops…' })).toBeNull();
    expect(within(card('ops')).getByTestId('skill-acceptance').dataset.state).toBe('accepted');
  });

  it('a host skill whose tools changed since: the dialog shows both', async () => {
    const changed = skillView('ops', {
      ...OPS,
      acceptance: { state: 'changed', tools: ['exec'], at: '2025-01-02T00:00:00Z' },
    });
    setup(routes([changed]));
    await screen.findAllByTestId('skill-card');
    expect(within(card('ops')).getByTestId('skill-acceptance').textContent).toContain('you accepted exec on');
    fireEvent.click(within(card('ops')).getByRole('button', { name: 'Accept the tools of ops…' }));
    const dialog = within(screen.getByRole('dialog'));
    expect(dialog.getByTestId('accept-tools').textContent).toBe('execprocessread');
    expect(dialog.getByTestId('accept-changed').textContent).toMatch(
      /^You accepted it on .+ with exec; they changed since\.$/,
    );
  });

  it('a refused change is said on the skill’s card', async () => {
    setup(
      routes([PAUSED], {
        'PUT /api/skills/summary': {
          status: 409,
          body: {
            error: {
              message: 'Skill "summary" was not saved: a public skill may reach web tools at most.',
              fix: 'Give agent "summary" fewer tools.',
            },
          },
        },
      }),
    );
    await screen.findAllByTestId('skill-card');
    await act(async () =>
      fireEvent.click(within(card('summary')).getByRole('button', { name: 'Resume summary' })),
    );
    expect(within(card('summary')).getByTestId('error-notice').textContent).toContain(
      'a public skill may reach web tools at most',
    );
    expect(card('summary').dataset.state).toBe('paused');
  });

  it('an edit the rules refuse says so under the audience, with the fix (its agent gained tools since the page loaded)', async () => {
    const refusal =
      'a public skill may reach web tools at most, and agent "research" is sandboxed (exec, web_fetch, web_search)';
    const { calls } = setup(
      routes([RESEARCH], {
        'PUT /api/skills/research': {
          status: 409,
          body: {
            error: {
              message: `Skill "research" was not saved: ${refusal}. Agent research runs exec only in its sandbox.`,
              fix: 'Give agent "research" fewer tools, or open the skill to approved callers only.',
              fields: [{ field: 'audience', message: refusal }],
            },
          },
        },
      }),
    );
    await screen.findAllByTestId('skill-card');
    fireEvent.click(within(card('research')).getByRole('button', { name: 'Edit research' }));
    // As the page last saw it, the agent is web: public is offered; the console judges it as it is now.
    fireEvent.click(audience('public'));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Save changes' })));
    expect(posted(calls, 'PUT', '/api/skills/research')).toEqual([{ audience: 'public' }]);
    expect(within(screen.getByTestId('audience-choice')).getByText(refusal)).toBeTruthy();
    const notice = within(screen.getByTestId('skill-form')).getByTestId('error-notice');
    expect(notice.textContent).toContain('Not saved');
    expect(notice.textContent).toContain(
      'Give agent "research" fewer tools, or open the skill to approved callers only.',
    );
    // Nothing changed on its card; the form stays open as chosen.
    expect(within(card('research')).getByText(/Approved callers/)).toBeTruthy();
    expect(audience('public').checked).toBe(true);
  });

  it('an acceptance refused because the tools changed meanwhile stays in the dialog, saying so', async () => {
    const { calls } = setup(
      routes([OPS], {
        'POST /api/skills/ops/accept': {
          status: 409,
          body: {
            error: {
              message: 'Skill "ops" does not have exactly those tools now, so nothing was accepted.',
              fix: 'Its tools changed since the page was loaded: look at the skill again and accept what it shows.',
            },
          },
        },
      }),
    );
    await screen.findAllByTestId('skill-card');
    fireEvent.click(within(card('ops')).getByRole('button', { name: 'Accept the tools of ops…' }));
    const dialog = within(screen.getByRole('dialog'));
    await act(async () => fireEvent.click(dialog.getByRole('button', { name: 'Accept these tools' })));
    expect(posted(calls, 'POST', '/api/skills/ops/accept')).toHaveLength(1);
    expect(dialog.getByTestId('error-notice').textContent).toContain('Nothing was accepted');
    expect(dialog.getByTestId('error-notice').textContent).toContain('look at the skill again');
    expect(screen.getByRole('dialog')).toBeTruthy();
    expect(card('ops').dataset.state).toBe('not-serving');
  });
});
