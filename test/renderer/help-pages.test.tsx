// @vitest-environment happy-dom
/**
 * Help where a question arises (issue 26, item 17): the pages' Help links open README.md and docs/*.md in the
 * console itself (bundled with the UI: no internet, no repository address), at the heading they name; links
 * between the pages stay inside the console. Which links exist and that each lands on a real heading is
 * test/unit/docs-commands.test.ts's job; this is what the operator sees when following one.
 */
import { act, cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../renderer/src/App';
import { helpFromHash, helpHref, resolveHelpLink } from '../../renderer/src/help/docs';
import { parseMarkdown } from '../../renderer/src/help/markdown';
import { FakeEventSource, fakeFetch, settingsView, status } from './fakes';

beforeEach(() => {
  FakeEventSource.instances = [];
  sessionStorage.setItem('agent-bridge.console-token', 'secret-token');
});
afterEach(() => {
  cleanup();
  sessionStorage.clear();
  vi.unstubAllGlobals();
});

async function open(hash: string) {
  window.history.replaceState(null, '', `/${hash}`);
  // happy-dom tells of that change with a hashchange event (browsers do not): let it pass before the console opens.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const { fetch } = fakeFetch({
    'GET /api/status': { body: status() },
    'GET /api/traffic': { body: { entries: [], total: 0 } },
    'GET /api/settings': {
      body: settingsView({ tunnel: 'localtunnel', access: 'pairing', outbound: 'any' }),
    },
  });
  vi.stubGlobal('fetch', fetch);
  render(<App createEventSource={FakeEventSource.create} />);
  await act(async () => FakeEventSource.last.open());
}

/** Follows a link as a click does: the fragment changes. */
async function follow(link: HTMLElement) {
  const href = link.getAttribute('href')!;
  expect(href).toMatch(/^#\/help\//);
  await act(async () => {
    window.history.pushState(null, '', `/${href}`);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  });
}

describe('Help links', () => {
  it('the Overview’s Tunnel card opens the tunnels page, in the console, at its heading', async () => {
    await open('#/overview');
    const card = await screen.findByTestId('tunnel-state');
    const link = within(card).getByRole('link', { name: 'Help: tunnels and a stable address' });
    expect(link.getAttribute('href')).toBe('#/help/tunnels');
    await follow(link);
    const page = await screen.findByTestId('help-page');
    expect(page.dataset.page).toBe('tunnels');
    const title = await within(page).findByRole('heading', { level: 1 });
    expect(title.textContent).toBe('Public address: tunnels');
    // Followed, not opened: keyboard focus goes where the link leads.
    expect(document.activeElement).toBe(title);
    // A help page is no tab.
    expect(document.querySelector('.tabs [aria-current="page"]')).toBeNull();
    expect(document.title).toBe('Public address: tunnels · Help · Agent Bridge');
  });

  it('each Settings section links to its own table of docs/settings.md', async () => {
    await open('#/settings');
    await screen.findByTestId('save-bar');
    const sections = [...document.querySelectorAll<HTMLElement>('fieldset[data-section]')];
    expect(sections.length).toBeGreaterThan(5);
    for (const section of sections) {
      const link = within(section).getByRole('link', { name: /^Help: .* settings$/ });
      expect(link.getAttribute('href')).toMatch(/^#\/help\/settings\/[a-z-]+$/);
    }
    const tunnel = sections.find((section) => section.dataset.section === 'tunnel')!;
    await follow(within(tunnel).getByRole('link', { name: 'Help: Tunnel settings' }));
    const heading = await screen.findByRole('heading', { name: 'Tunnel', level: 2 });
    expect(heading.dataset.anchor).toBe('tunnel');
    expect(document.activeElement).toBe(heading);
    // The table under it, as the page shows it: the setting, its flag, its default.
    const table = heading.nextElementSibling as HTMLElement;
    expect(within(table).getByRole('columnheader', { name: 'flag' })).toBeTruthy();
    expect(within(table).getByText('--tunnel-command')).toBeTruthy();
  });
});

describe('a help page', () => {
  it('opened with the console starts at the top: focus stays with the skip link and the tabs', async () => {
    await open('#/help/security/your-consent-for-new-senders');
    const heading = await screen.findByRole('heading', { name: 'Your consent for new senders' });
    expect(heading.dataset.anchor).toBe('your-consent-for-new-senders');
    expect(document.activeElement).toBe(document.body);
  });

  it('keeps links between pages in the console, and opens other sites in a browser', async () => {
    await open('#/help/settings');
    await screen.findByRole('heading', { level: 1, name: 'Settings' });
    const toTunnels = screen.getAllByRole('link', { name: 'Tunnels' })[0]!;
    expect(toTunnels.getAttribute('href')).toBe('#/help/tunnels');
    const toMcp = screen.getAllByRole('link', { name: 'MCP' })[0]!;
    expect(toMcp.getAttribute('href')).toBe('#/help/mcp/who-your-agent-may-call');
    // The skills note for the docs' writers (an HTML comment) is not shown.
    expect(document.body.textContent).not.toContain('issue 27');

    await open('#/help/tunnels');
    const external = (await screen.findAllByRole('link', { name: 'localtunnel' }))[0]!;
    expect(external.getAttribute('href')).toBe('https://github.com/localtunnel/localtunnel');
    expect(external.getAttribute('target')).toBe('_blank');
    expect(external.getAttribute('rel')).toContain('noreferrer');
  });

  it('the home is the README: each page one link away; commands come with a copy button', async () => {
    await open('#/help');
    const page = await screen.findByTestId('help-page');
    expect(within(page).getByRole('heading', { level: 1 }).textContent).toBe('Agent Bridge');
    const read = within(page).getByRole('heading', { name: 'Read more' });
    expect(read).toBeTruthy();
    const hrefs = within(page)
      .getAllByRole('link')
      .map((link) => link.getAttribute('href'));
    for (const id of [
      'desktop',
      'server',
      'security',
      'tunnels',
      'settings',
      'troubleshooting',
      'contributing',
    ])
      expect(hrefs).toContain(`#/help/${id}`);
    expect(within(page).getAllByRole('button', { name: 'Copy these commands' }).length).toBeGreaterThan(1);
    // No image: the console serves none of the docs' files.
    expect(page.querySelector('img')).toBeNull();
  });

  it('names a page that does not exist, and links to every page', async () => {
    await open('#/help/no-such-page');
    const notice = await screen.findByTestId('help-missing');
    expect(notice.textContent).toContain('There is no help page “no-such-page”');
    expect(within(notice).getByRole('link', { name: 'See every help page' }).getAttribute('href')).toBe(
      '#/help/readme',
    );
  });

  it('leads back to every page from any other', async () => {
    await open('#/help/desktop');
    await screen.findByRole('heading', { level: 1, name: 'The desktop app' });
    expect(screen.getByRole('link', { name: 'All help pages' }).getAttribute('href')).toBe('#/help/readme');
  });
});

describe('help routes and links', () => {
  it('reads the fragment and writes the route from a docs reference', () => {
    expect(helpFromHash('#/help')).toEqual({ page: 'readme' });
    expect(helpFromHash('#/help/tunnels')).toEqual({ page: 'tunnels' });
    expect(helpFromHash('#/help/tunnels/how-the-tunnel-is-kept-up')).toEqual({
      page: 'tunnels',
      section: 'how-the-tunnel-is-kept-up',
    });
    expect(helpFromHash('#/settings/tunnel')).toBeUndefined();
    expect(helpFromHash('#/helpers')).toBeUndefined();
    expect(helpHref('docs/a2a.md#give-an-a2a-agent-a-key')).toBe('#/help/a2a/give-an-a2a-agent-a-key');
  });

  it('resolves a page’s links from where it is: docs/ to docs/, to the README, and elsewhere', () => {
    expect(resolveHelpLink('tunnels.md#the-address-is-the-agents-id', 'docs/settings.md')).toEqual({
      kind: 'help',
      href: '#/help/tunnels/the-address-is-the-agents-id',
    });
    expect(resolveHelpLink('../README.md#install', 'docs/desktop.md')).toEqual({
      kind: 'help',
      href: '#/help/readme/install',
    });
    expect(resolveHelpLink('docs/security.md', 'README.md')).toEqual({
      kind: 'help',
      href: '#/help/security',
    });
    expect(resolveHelpLink('#the-data-folder', 'docs/settings.md')).toEqual({
      kind: 'help',
      href: '#/help/settings/the-data-folder',
    });
    expect(resolveHelpLink('docs/console-overview.png', 'README.md')).toEqual({ kind: 'none' });
    expect(resolveHelpLink('javascript:alert(1)', 'README.md')).toEqual({ kind: 'none' });
  });
});

describe('the Markdown the pages are written in', () => {
  it('reads headings with GitHub’s anchors, lists with their blocks, tables, code, and skips comments', () => {
    const blocks = parseMarkdown(
      [
        "# Public address: `tunnels` (and the id's rules)",
        '',
        '<!-- a note',
        'for writers -->',
        '- one _em_ and **strong** and `code` and [a link](x.md#y)',
        '  continued',
        '- two',
        '',
        '| a | b \\| c |',
        '| - | - |',
        '| `x` | y |',
        '',
        '```sh',
        'npm test',
        '```',
        "## Public address: `tunnels` (and the id's rules)",
      ].join('\n'),
    );
    expect(blocks.map((block) => block.kind)).toEqual(['heading', 'list', 'table', 'code', 'heading']);
    expect(blocks[0]).toMatchObject({ anchor: 'public-address-tunnels-and-the-ids-rules' });
    expect(blocks[4]).toMatchObject({ anchor: 'public-address-tunnels-and-the-ids-rules-1' });
    expect(blocks[1]).toMatchObject({
      ordered: false,
      items: [
        [
          {
            kind: 'paragraph',
            children: [
              { kind: 'text', text: 'one ' },
              { kind: 'em', children: [{ kind: 'text', text: 'em' }] },
              { kind: 'text', text: ' and ' },
              { kind: 'strong', children: [{ kind: 'text', text: 'strong' }] },
              { kind: 'text', text: ' and ' },
              { kind: 'code', text: 'code' },
              { kind: 'text', text: ' and ' },
              { kind: 'link', href: 'x.md#y', children: [{ kind: 'text', text: 'a link' }] },
              { kind: 'text', text: '\ncontinued' },
            ],
          },
        ],
        [{ kind: 'paragraph', children: [{ kind: 'text', text: 'two' }] }],
      ],
    });
    expect(blocks[2]).toMatchObject({
      head: [[{ text: 'a' }], [{ text: 'b | c' }]],
      rows: [[[{ kind: 'code', text: 'x' }], [{ text: 'y' }]]],
    });
    expect(blocks[3]).toEqual({ kind: 'code', language: 'sh', text: 'npm test' });
    // snake_case is no emphasis.
    expect(parseMarkdown('agent-bridge__samvad_call and a_b_c')[0]).toEqual({
      kind: 'paragraph',
      children: [{ kind: 'text', text: 'agent-bridge__samvad_call and a_b_c' }],
    });
  });
});
