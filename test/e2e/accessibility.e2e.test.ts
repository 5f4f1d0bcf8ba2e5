// Accessibility of the console (issue 16), in Debian's Chromium: axe-core on every page (Overview, Traffic
// with its details open, Skills with a new skill's proposed config, Access with an A2A key just issued, Keys,
// Registry, Settings with its form errors, help pages), every dialog and the token screen, in the light and the dark color scheme, failing on any
// violation; and the keyboard's way in: after load the first Tab reaches the skip link, then the tabs, and a
// click in the page does not pull focus into it. Against the same stack as console.e2e.test.ts, with calls
// in, a refused one, a waiting sender and a call out, so every kind of row and badge is on screen.
import { AxeBuilder } from '@axe-core/playwright';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { attr, hasBuiltUi, hasChromium, launchChromium, UI_INDEX, watchProblems } from './browser.js';
import { startStack, type Stack } from './stack.js';

const WAIT = { timeout: 10_000 };
// Each page is analysed whole, in two color schemes: slower than a click, on a loaded machine too.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });
const SCHEMES = ['light', 'dark'] as const;

const A2A_CALL = () => ({
  time: new Date().toISOString(),
  endpoint: '/a2a/jsonrpc',
  sender: 'a2a-key:k1',
  callerName: 'Research bot',
  skill: 'chat',
  mode: 'sync' as const,
  signatureForm: 'none' as const,
  verdict: 'accepted' as const,
  status: 200,
  durationMs: 40,
  bytesIn: 300,
  bytesOut: 500,
  protocol: 'a2a' as const,
  a2a: {
    method: 'SendMessage',
    version: '1.0' as const,
    transport: 'jsonrpc' as const,
    taskState: 'completed',
  },
});

/** Every axe violation on the page as it is now, one line each: rule, impact, what to fix, where. */
async function violations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations.map(
    (violation) =>
      `${violation.id} (${violation.impact ?? 'unknown'}): ${violation.help} at ` +
      violation.nodes
        .slice(0, 5)
        .map(
          (node) =>
            `${node.target.join(' ')}${node.failureSummary ? ` [${node.failureSummary.replace(/\s+/g, ' ')}]` : ''}`,
        )
        .join('; '),
  );
}

/** The focused element, as `tag.class "text"` (or "body"). */
async function focused(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const element = document.activeElement;
    if (!element || element === document.body) return 'body';
    return element.tagName.toLowerCase() + '.' + element.className + ' "' + (element.textContent || '').trim().slice(0, 30) + '"';
  })()`);
}

describe.skipIf(!hasChromium)('accessibility in Chromium', () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    if (!hasBuiltUi())
      throw new Error(`The console UI is not built (${UI_INDEX} is missing): run \`npm run build\`.`);
    browser = await launchChromium();
    stack = await startStack();
    // Something of every kind: calls in (accepted and refused), a sender waiting, a call out.
    expect((await stack.signedCall('hello')).status).toBe(200);
    expect((await stack.tamperedCall()).status).toBe(401);
    expect((await stack.strangerCall('may I talk to your agent?')).status).toBe(403);
    const { token } = JSON.parse(readFileSync(stack.console.mcp.file, 'utf8')) as { token: string };
    const client = new Client({ name: 'a11y', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(stack.console.mcp.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    try {
      await client.callTool({
        name: 'samvad_call',
        arguments: { agent: stack.peer.id, skill: 'chat', payload: { message: 'a call out' } },
      });
    } finally {
      await client.close();
    }
    // An A2A call, as the A2A front door logs one (its own e2e makes real ones): its row and details.
    stack.agent.app.emit('envelope', A2A_CALL());
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  for (const colorScheme of SCHEMES) {
    describe(`${colorScheme} color scheme`, () => {
      let page: Page;
      let problems: string[];

      beforeAll(async () => {
        const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, colorScheme });
        page = await context.newPage();
        page.setDefaultTimeout(WAIT.timeout);
        problems = watchProblems(page, `${colorScheme} page`);
        await page.goto(`${stack.console.url}/#token=${stack.console.token}`);
        await page.getByTestId('agent-id').waitFor(WAIT);
      });

      afterAll(async () => {
        await page?.context().close();
      });

      async function open(name: string, ready: string) {
        const link = page.getByTestId(`nav-${name}`);
        await link.click();
        await expect.poll(() => attr(link, 'aria-current'), WAIT).toBe('page');
        await page.locator(ready).first().waitFor(WAIT);
      }

      async function check(name: string) {
        expect(await violations(page), `${name} (${colorScheme})`).toEqual([]);
      }

      /** axe with a dialog open (opened by `button`), then closed with Cancel. */
      async function checkDialog(name: string, button: string) {
        await page.getByRole('button', { name: button }).first().click();
        const dialog = page.getByRole('dialog');
        await dialog.waitFor({ state: 'visible', ...WAIT });
        try {
          await check(name);
        } finally {
          await dialog.getByRole('button', { name: 'Cancel' }).click();
          await dialog.waitFor({ state: 'hidden', ...WAIT });
        }
      }

      it('Overview, and its new MCP token dialog', async () => {
        await open('overview', '[data-testid="agent-identity"]');
        await check('overview');
        await checkDialog('overview-mcp-token-dialog', 'New token…');
      });

      it('Traffic, and its details pane', async () => {
        await open('traffic', '[data-testid="traffic-row"]');
        await check('traffic');
        await page.locator('[data-testid="traffic-row"][data-verdict="signature"]').first().click();
        await page.getByTestId('traffic-details').waitFor(WAIT);
        await check('traffic-details');
        await page.locator('[data-testid="traffic-row"][data-direction="out"]').first().click();
        await expect
          .poll(() => attr(page.getByTestId('traffic-details'), 'data-direction'), WAIT)
          .toBe('out');
        await check('traffic-details-out');
        await page.locator('[data-testid="traffic-row"][data-protocol="a2a"]').first().click();
        await page.getByTestId('a2a-method').waitFor(WAIT);
        await check('traffic-details-a2a');
        await page.getByRole('button', { name: 'Close details' }).click();
      });

      it('Skills, with the form of a new skill and its proposed config (one analysis: list and form)', async () => {
        await open('skills', '[data-testid="skill-card"]');
        await page.getByRole('button', { name: 'Add a skill' }).click();
        const form = page.getByTestId('skill-form');
        await form.getByLabel('Id', { exact: true }).fill('research');
        await form.getByRole('button', { name: 'Propose the config' }).click();
        await page.getByTestId('skill-snippet').waitFor(WAIT);
        await check('skills-add');
        await form.getByRole('button', { name: 'Cancel' }).click();
      });

      it('Access, its deny dialog, an A2A key just issued and its revoke dialog', async () => {
        await open('access', '[data-testid="pending-row"]');
        await check('access');
        await checkDialog('access-deny-dialog', `Deny ${stack.stranger.id}`);
        const form = page.getByTestId('issue-key-form');
        await form.getByLabel('Name of the agent it is for').fill(`Research agent (${colorScheme})`);
        await form.getByLabel('Expires').selectOption({ label: 'In 30 days' });
        await form.getByLabel('Requests per minute').fill('5');
        await form.getByRole('button', { name: 'Issue key' }).click();
        await page.getByTestId('issued-key').waitFor(WAIT);
        await check('access-a2a-key-issued');
        await checkDialog('access-a2a-revoke-dialog', `Revoke the key for Research agent (${colorScheme})`);
      });

      it('Keys, and its rotate and revoke dialogs', async () => {
        await open('keys', '[data-testid="key-row"]');
        await check('keys');
        await checkDialog('keys-rotate-dialog', 'Rotate key…');
        await checkDialog('keys-revoke-dialog', 'Revoke key');
      });

      it('Registry', async () => {
        await open('registry', '[data-testid="nav-registry"][aria-current="page"]');
        await page
          .getByRole('button', { name: /Register/ })
          .first()
          .waitFor(WAIT);
        await check('registry');
      });

      it('Settings, with its field errors and the new console token dialog', async () => {
        await open('settings', '[data-section="gateway"]');
        await check('settings');
        await page.getByLabel('Requests per minute (all callers)').fill('many');
        await page.getByRole('button', { name: 'Save changes' }).click();
        await page.getByTestId('settings-errors').waitFor(WAIT);
        await check('settings-errors');
        await page.getByRole('button', { name: 'Discard' }).click();
        await checkDialog('settings-console-token-dialog', 'New console token…');
      });

      it('Help: a page a Help link opens (tables, code), the README, and a long page', async () => {
        await open('settings', '[data-section="tunnel"]');
        await page.getByRole('link', { name: 'Help: Tunnel settings' }).click();
        // The Settings page has a Settings title and a Tunnel heading too: the help page's own say it opened.
        const help = page.getByTestId('help-page');
        await help.getByRole('heading', { name: 'Settings', level: 1 }).waitFor(WAIT);
        await help.getByRole('heading', { name: 'Tunnel', level: 2 }).waitFor(WAIT);
        await check('help-settings');
        await page.getByRole('link', { name: 'All help pages' }).click();
        await page.getByRole('heading', { name: 'Read more' }).waitFor(WAIT);
        await check('help-readme');
        await page.locator('a[href="#/help/security"]').click();
        await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor(WAIT);
        await check('help-security');
      });

      it('the token screen', async () => {
        const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, colorScheme });
        try {
          const other = await context.newPage();
          await other.goto(`${stack.console.url}/#token=wrong`);
          await other.getByTestId('token-screen').getByText('The console refused this token.').waitFor(WAIT);
          expect(await violations(other), `token screen (${colorScheme})`).toEqual([]);
        } finally {
          await context.close();
        }
      });

      it('had no page errors', () => {
        expect(problems).toEqual([]);
      });
    });
  }

  describe('the keyboard’s way in', () => {
    let page: Page;

    beforeAll(async () => {
      const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
      page = await context.newPage();
      page.setDefaultTimeout(WAIT.timeout);
      await page.goto(`${stack.console.url}/#token=${stack.console.token}`);
      await page.getByTestId('agent-id').waitFor(WAIT);
    });

    afterAll(async () => {
      await page?.context().close();
    });

    it('after load, Tab reaches the skip link first, then the tabs in order', async () => {
      expect(await focused(page)).toBe('body');
      const order: string[] = [];
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press('Tab');
        order.push(await focused(page));
      }
      // (Access carries the count of senders waiting.)
      expect(order.map((element) => element.replace(/ \(\d+\)"$/, '"'))).toEqual([
        'a.skip-link "Skip to content"',
        'a.tab "Overview"',
        'a.tab "Traffic"',
        'a.tab "Skills"',
        'a.tab "Access"',
        'a.tab "Keys"',
        'a.tab "Registry"',
        'a.tab "Settings"',
      ]);
    });

    it('opening a page at a section scrolls there, and focus still starts at the top: skip link, tabs, section nav', async () => {
      const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
      try {
        const fresh = await context.newPage();
        fresh.setDefaultTimeout(WAIT.timeout);
        await fresh.goto(`${stack.console.url}/#token=${stack.console.token}`);
        await fresh.getByTestId('agent-id').waitFor(WAIT);
        // A link to a section, opened anew (the tab keeps its token).
        await fresh.goto(`${stack.console.url}/#/settings/machine`);
        await fresh.reload();
        await fresh.getByLabel('Console port').waitFor(WAIT);
        // In view, without taking the keyboard's focus there.
        await expect
          .poll(
            () =>
              fresh.evaluate<number>(
                `document.querySelector('[data-section="machine"]').getBoundingClientRect().top`,
              ),
            WAIT,
          )
          .toBeLessThan(450);
        expect(await focused(fresh)).toBe('body');
        const order: string[] = [];
        for (let i = 0; i < 9; i++) {
          await fresh.keyboard.press('Tab');
          order.push(await focused(fresh));
        }
        expect(order[0]).toBe('a.skip-link "Skip to content"');
        expect(order.slice(1, 8).every((element) => element.startsWith('a.tab '))).toBe(true);
        expect(order[8]).toBe('a. "Gateway"');
        // A section link then takes focus to its heading.
        await fresh.getByTestId('jump-registry').click();
        expect(await focused(fresh)).toMatch(/^h2\b.* "Registry"$/);
      } finally {
        await context.close();
      }
    });

    it('through the token screen too, the first Tab reaches the skip link', async () => {
      const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
      try {
        const fresh = await context.newPage();
        await fresh.goto(`${stack.console.url}/`);
        await fresh
          .getByLabel('Console token or URL')
          .fill(`${stack.console.url}/#token=${stack.console.token}`);
        await fresh.keyboard.press('Enter');
        await fresh.getByTestId('agent-id').waitFor(WAIT);
        expect(await focused(fresh)).toBe('body');
        await fresh.keyboard.press('Tab');
        expect(await focused(fresh)).toBe('a.skip-link "Skip to content"');
        await fresh.keyboard.press('Tab');
        expect(await focused(fresh)).toBe('a.tab "Overview"');
      } finally {
        await context.close();
      }
    });

    it('a click in the page leaves no focus inside it; the skip link still leads into the page', async () => {
      await page.reload();
      await page.getByTestId('agent-id').waitFor(WAIT);
      // A click on the page's own text (no control there), as a person focusing the window does.
      await page.getByTestId('agent-identity').locator('.agent-name').click();
      expect(await focused(page)).toBe('body');

      await page.keyboard.press('Shift+Tab');
      await page.reload();
      await page.getByTestId('agent-id').waitFor(WAIT);
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('a.skip-link "Skip to content"');
      await page.keyboard.press('Enter');
      expect(await focused(page)).toMatch(/^main\.main /);
      // The next Tab goes into the page, past the header and the tabs.
      await page.keyboard.press('Tab');
      expect(await page.evaluate(`document.querySelector('main').contains(document.activeElement)`)).toBe(
        true,
      );
      // <main> is focusable only for that jump.
      expect(await page.evaluate(`document.querySelector('main').hasAttribute('tabindex')`)).toBe(false);
    });
  });
});
