/**
 * Looks at the built UI in Debian's Chromium against the mock console: one screenshot per page, light and dark,
 * plus the token screen, and fails on any page error or CSP violation. Development only.
 *
 *   npx vite build && npx tsx renderer/dev/screenshots.ts [outDir]
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { DEV_TOKEN, startMockConsole, type Scenario } from './mock-console.js';

const outDir = resolve(process.argv[2] ?? 'test-results/renderer-screenshots');
await mkdir(outDir, { recursive: true });

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--headless',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});
const problems: string[] = [];
const say = (line: string) => process.stdout.write(`${line}\n`);
const watch = (page: Page, name: string) => {
  page.on('pageerror', (error) => problems.push(`${name}: page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) {
      // Expected: the wrong token's 401, the invalid settings' 400, the refused connections while "restarting".
      if (!/\b(401|400)\b|ERR_CONNECTION_(REFUSED|RESET)/.test(message.text()))
        problems.push(`${name}: console ${message.type()}: ${message.text()}`);
    }
  });
};

async function shoot(scenario: Scenario, colorScheme: 'light' | 'dark') {
  const mock = await startMockConsole({ scenario, entries: 10_000, streamEveryMs: 700 });
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, colorScheme });
  const page = await context.newPage();
  const tag = `${scenario}-${colorScheme}`;
  watch(page, tag);
  try {
    await page.goto(`${mock.url}/#token=${DEV_TOKEN}`);
    await page.getByTestId('gateway-state').waitFor();
    if (page.url().includes('token=')) problems.push(`${tag}: the token stayed in the address bar`);
    await page.getByRole('button', { name: 'Test' }).click();
    await page.getByTestId('selftest-result').waitFor();
    await page.screenshot({ path: `${outDir}/overview-${tag}.png`, fullPage: true });

    // Keyboard: the focus ring on the tabs.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.screenshot({
      path: `${outDir}/keyboard-focus-${tag}.png`,
      clip: { x: 0, y: 0, width: 700, height: 120 },
    });

    await page.getByTestId('nav-traffic').click();
    await page.getByTestId('traffic-row').first().waitFor();
    const rendered = await page.getByTestId('traffic-row').count();
    say(`${tag}: traffic rows in the DOM: ${rendered}`);
    if (rendered > 80) problems.push(`${tag}: ${rendered} rows rendered; the list is not virtualised`);
    await page.getByTestId('traffic-row').nth(3).click();
    await page.getByTestId('traffic-details').waitFor();
    await page.screenshot({ path: `${outDir}/traffic-${tag}.png` });
    // A2A calls: one answered, with the door's own steps; one refused at its revoked key, the key named.
    await page
      .locator('[data-testid="traffic-row"][data-protocol="a2a"][data-verdict="accepted"]')
      .first()
      .click();
    await page.getByTestId('a2a-method').waitFor();
    await page.screenshot({ path: `${outDir}/traffic-a2a-${tag}.png` });
    await page
      .getByTestId('traffic-row')
      .filter({ has: page.getByTestId('traffic-key-status') })
      .first()
      .click();
    await page.getByTestId('key-status').waitFor();
    await page.screenshot({ path: `${outDir}/traffic-a2a-revoked-${tag}.png` });
    // Scrolling 10,000 rows: the frame rate while jumping through the list.
    // A string, not a function: this file is type-checked without the DOM library.
    const frames = await page.evaluate<number>(`(async () => {
      const list = document.querySelector('.vlist-scroll');
      if (!list) return -1;
      let count = 0;
      const started = performance.now();
      await new Promise((done) => {
        const step = () => {
          count += 1;
          list.scrollTop += 900;
          if (performance.now() - started < 1000) requestAnimationFrame(step);
          else done();
        };
        requestAnimationFrame(step);
      });
      return count;
    })()`);
    say(`${tag}: frames in 1 s of fast scrolling: ${frames}`);
    await page.setViewportSize({ width: 820, height: 900 });
    await page.screenshot({ path: `${outDir}/traffic-narrow-${tag}.png` });
    await page.setViewportSize({ width: 1360, height: 900 });
    await page.getByLabel('Verdict').selectOption('refused');
    await page.getByLabel('Search').fill('nonce');
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${outDir}/traffic-filtered-${tag}.png` });

    // Skills: each skill's card; a new one from a template, its config proposed, checked again (as the
    // template intends, or, with problems, defeated by the operator's config), added; a host skill's tools.
    await page.getByTestId('nav-skills').click();
    await page.getByTestId('skill-card').first().waitFor();
    await page.screenshot({ path: `${outDir}/skills-${tag}.png`, fullPage: true });
    await page.getByRole('button', { name: 'Add a skill' }).click();
    const skillForm = page.getByTestId('skill-form');
    await skillForm.getByLabel('Id', { exact: true }).fill('web-research');
    await skillForm.getByLabel('Name', { exact: true }).fill('Web research');
    await skillForm.getByLabel('Description').fill('Searches the web and answers with the sources it read.');
    await skillForm.getByRole('button', { name: 'Propose the config' }).click();
    await page.getByTestId('skill-snippet').waitFor();
    await page.getByTestId('skill-form-card').screenshot({ path: `${outDir}/skills-proposed-${tag}.png` });
    await skillForm.getByRole('button', { name: 'Check again' }).click();
    await page.locator('[data-testid="skill-agent-outcome"]:not([data-state="not-applied"])').waitFor();
    await page.getByTestId('skill-form-card').screenshot({ path: `${outDir}/skills-checked-${tag}.png` });
    await skillForm.getByRole('button', { name: 'Add skill' }).click();
    await page.getByTestId('skills-result').waitFor();
    await page.screenshot({ path: `${outDir}/skills-added-${tag}.png`, fullPage: true });
    await page
      .getByRole('button', { name: /^Accept the tools of / })
      .first()
      .click();
    await page.getByRole('dialog').waitFor();
    await page.screenshot({ path: `${outDir}/skills-accept-dialog-${tag}.png` });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });

    // The Access tab's name carries the pending count ("Access (2)"): by its test id.
    await page.getByTestId('nav-access').click();
    await page.getByTestId('pending-row').first().waitFor();
    await page.screenshot({ path: `${outDir}/access-${tag}.png`, fullPage: true });
    await page.getByTestId('deny-button').first().click();
    await page.getByRole('dialog').waitFor();
    await page.screenshot({ path: `${outDir}/access-deny-dialog-${tag}.png` });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    // A sender approved for some skills only: the scope it may call.
    await page
      .getByRole('button', { name: /for some skills/ })
      .first()
      .click();
    await page.getByRole('dialog').getByRole('checkbox').nth(1).check();
    await page.getByRole('dialog').screenshot({ path: `${outDir}/access-scope-dialog-${tag}.png` });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });

    await page.getByTestId('nav-keys').click();
    await page.getByTestId('key-row').first().waitFor();
    await page.screenshot({ path: `${outDir}/keys-${tag}.png` });
    await page.getByRole('button', { name: 'Rotate key…' }).click();
    await page.getByRole('dialog').waitFor();
    const focused = await page.evaluate<string | undefined>('document.activeElement?.textContent');
    if (focused !== 'Rotate')
      problems.push(`${tag}: the dialog's confirm button is not focused (${focused})`);
    await page.screenshot({ path: `${outDir}/keys-rotate-dialog-${tag}.png` });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });

    await page.getByTestId('nav-registry').click();
    await page.getByTestId('registry-state').waitFor();
    await page.screenshot({ path: `${outDir}/registry-${tag}.png` });
    if (scenario === 'problems') {
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByTestId('registry-progress').waitFor();
      await page.screenshot({ path: `${outDir}/registry-progress-${tag}.png` });
      await page.getByTestId('registry-record').waitFor();
      await page.screenshot({ path: `${outDir}/registry-registered-${tag}.png` });
    }

    await page.getByTestId('nav-settings').click();
    await page.getByLabel('Requests per minute (all callers)').waitFor();
    await page.screenshot({ path: `${outDir}/settings-${tag}.png`, fullPage: true });
    await page.getByLabel('Requests per minute (all callers)').fill('0');
    await page.getByLabel('Subdomain').fill('-bad-');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('field-error').first().waitFor();
    await page.screenshot({ path: `${outDir}/settings-errors-${tag}.png`, fullPage: true });
    await page.getByLabel('Requests per minute (all callers)').fill('120');
    await page.getByLabel('Subdomain').fill('brave-otter');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('settings-saved').waitFor();
    await page.screenshot({ path: `${outDir}/settings-saved-${tag}.png`, fullPage: true });

    // Help where the question arises: a Settings section's link opens docs/settings.md at its table, in the
    // console; the pages' own links stay there too.
    await page.getByRole('link', { name: 'Help: Tunnel settings' }).click();
    await page.getByRole('heading', { name: 'Tunnel', level: 2 }).waitFor();
    await page.screenshot({ path: `${outDir}/help-settings-${tag}.png` });
    await page.getByRole('link', { name: 'All help pages' }).click();
    await page.getByRole('heading', { name: 'Read more' }).waitFor();
    await page.locator('a[href="#/help/security"]').click();
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    await page.screenshot({ path: `${outDir}/help-security-${tag}.png`, fullPage: true });

    // The console restarts: the stream says so, then comes back by itself.
    await page.getByTestId('nav-overview').click();
    const port = Number(new URL(mock.url).port);
    await mock.close();
    await page.getByTestId('reconnecting-banner').waitFor();
    await page.screenshot({ path: `${outDir}/reconnecting-${tag}.png` });
    const again = await startMockConsole({ scenario, entries: 20, port });
    await page
      .getByTestId('connection-state')
      .and(page.locator('[data-state="live"]'))
      .waitFor({ timeout: 20_000 });
    await again.close();
  } finally {
    await context.close();
    await mock.close().catch(() => undefined);
  }
}

async function tokenScreens() {
  const mock = await startMockConsole({ entries: 0, streamEveryMs: 0 });
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  watch(page, 'token');
  try {
    await page.goto(`${mock.url}/`);
    await page.getByTestId('token-screen').waitFor();
    await page.screenshot({ path: `${outDir}/token-missing.png` });
    // Only the fragment changes: the open page takes the new token (hashchange), and the console refuses it.
    await page.goto(`${mock.url}/#token=wrong`);
    await page.getByText('The console refused this token.').waitFor();
    await page.screenshot({ path: `${outDir}/token-refused.png` });
    await page.getByLabel('Console token or URL').fill(`${mock.url}/#token=${DEV_TOKEN}`);
    await page.getByRole('button', { name: 'Open console' }).click();
    await page.getByTestId('gateway-state').waitFor();
    await page.getByTestId('nav-traffic').click();
    await page.getByTestId('empty-state').waitFor();
    await page.screenshot({ path: `${outDir}/traffic-empty.png` });
  } finally {
    await context.close();
    await mock.close();
  }
}

try {
  await tokenScreens();
  // Every page in both color schemes, with problems and when all is well.
  await shoot('problems', 'light');
  await shoot('healthy', 'dark');
  await shoot('problems', 'dark');
  await shoot('healthy', 'light');
} finally {
  await browser.close();
}
say(`Screenshots in ${outDir}`);
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exitCode = 1;
}
