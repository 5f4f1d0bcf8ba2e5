// Debian's Chromium driven by playwright-core: where it is, how it is launched, where screenshots go, and a
// watch for page errors and CSP violations (the console's CSP is strict: an inline script would show here).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const UI_INDEX = fileURLToPath(new URL('../../dist/renderer/index.html', import.meta.url));
export const SCREENSHOTS = fileURLToPath(new URL('../../test-results/e2e/', import.meta.url));

export const hasChromium = existsSync(CHROMIUM);
export const hasBuiltUi = (): boolean => existsSync(UI_INDEX);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless=new',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Page errors, failed console messages and CSP violations, each `tag: text`. */
export function watchProblems(page: Page, tag: string, expected: RegExp | null = null): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`${tag}: page error: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() !== 'error' && !/Content Security Policy/i.test(text)) return;
    if (expected?.test(text)) return;
    problems.push(`${tag}: console ${message.type()}: ${text}`);
  });
  return problems;
}

/** A full-page screenshot (or only the viewport, for a detail) as test-results/e2e/<name>.png. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const path = `${SCREENSHOTS}${name}.png`;
  await page.screenshot({ path, fullPage });
  return path;
}

// Readers for expect.poll: they answer at once (no Playwright auto-wait), so the poll decides how long to wait.

export async function attr(locator: Locator, name: string): Promise<string | null> {
  if ((await locator.count()) === 0) return null;
  return locator.first().getAttribute(name, { timeout: 1000 });
}

export async function attrs(locator: Locator, name: string): Promise<(string | null)[]> {
  const all = await locator.all();
  return Promise.all(all.map((one) => one.getAttribute(name, { timeout: 1000 })));
}

export async function text(locator: Locator): Promise<string> {
  return (await locator.allTextContents()).join(' ');
}
