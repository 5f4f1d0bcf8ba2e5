// Layout as a person sees it (issue 16), in Debian's Chromium: an agent id or URL wraps between names (after
// `agent://`, before a dot or the port), never inside one; with the Traffic details pane open, the agent
// column still shows each agent's host and port. Issue 26, item 16: Access and Settings use the width (two
// columns on a wide screen) and jump to a section from a small nav; a key id never wraps; no Traffic column
// header is cut off. Measured in the page (where each character's line is, whether a cell's text overflows
// it, where each section is), against the same stack as console.e2e.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { attr, hasBuiltUi, hasChromium, launchChromium, screenshot, UI_INDEX } from './browser.js';
import { startStack, type Stack } from './stack.js';

const WAIT = { timeout: 10_000 };

/**
 * For an element: its text, and where each line after the first begins (the index of its first character),
 * from the boxes Chromium laid the characters out in.
 */
const LINE_STARTS = `(element) => {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const tops = [];
  let text = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      tops.push(box ? box.top : null);
      text += node.data[i];
    }
  }
  const starts = [];
  for (let i = 1; i < tops.length; i++) {
    if (tops[i] !== null && tops[i - 1] !== null && tops[i] > tops[i - 1] + 2) starts.push(i);
  }
  return { text, starts };
}`;

async function lineStarts(page: Page, selector: string): Promise<{ text: string; starts: number[] }> {
  return page.evaluate(`(${LINE_STARTS})(document.querySelector(${JSON.stringify(selector)}))`);
}

/** A line may begin right after `scheme://`, or with a dot, colon, slash, `?` or `#`, or after a hyphen. */
function sensible(text: string, start: number): boolean {
  return text.slice(0, start).endsWith('://') || '.:/?#'.includes(text[start]!) || text[start - 1] === '-';
}

describe.skipIf(!hasChromium)('layout in Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    if (!hasBuiltUi())
      throw new Error(`The console UI is not built (${UI_INDEX} is missing): run \`npm run build\`.`);
    browser = await launchChromium();
    stack = await startStack();
    context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT.timeout);
    await page.goto(`${stack.console.url}/#token=${stack.console.token}`);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('wraps the agent id and the public URL only between names, on a narrow window', async () => {
    // Narrow enough that the id and the URL cannot stay on one line.
    await page.setViewportSize({ width: 360, height: 800 });
    try {
      await expect.poll(() => page.getByTestId('agent-id').textContent(), WAIT).toBe(stack.agentId());
      for (const id of ['agent-id', 'agent-url']) {
        const { text, starts } = await lineStarts(page, `[data-testid="${id}"]`);
        expect(starts.length, `${id} "${text}" wraps`).toBeGreaterThan(0);
        for (const start of starts) {
          expect(sensible(text, start), `${id}: a line starts "${text.slice(start)}"`).toBe(true);
        }
      }
      await screenshot(page, 'layout-narrow-overview');
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
  });

  it('wraps a waiting sender’s id only between names on the Access page', async () => {
    const refused = await stack.strangerCall('hello from a narrow window');
    expect(refused.status).toBe(403);
    await page.setViewportSize({ width: 360, height: 800 });
    try {
      await page.getByTestId('nav-access').click();
      const row = page.locator(`[data-testid="pending-row"][data-sender="${stack.stranger.id}"]`);
      await row.waitFor(WAIT);
      const { text, starts } = await lineStarts(
        page,
        `[data-testid="pending-row"][data-sender="${stack.stranger.id}"] .copyable code`,
      );
      expect(text).toBe(stack.stranger.id);
      for (const start of starts) {
        expect(sensible(text, start), `a line starts "${text.slice(start)}"`).toBe(true);
      }
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
  });

  /** The Traffic column headers whose text does not fit their column. */
  const clippedHeaders = () =>
    page.evaluate<string[]>(
      `[...document.querySelectorAll('[role="columnheader"]')]
        .filter((cell) => cell.offsetParent !== null && cell.scrollWidth > cell.clientWidth)
        .map((cell) => cell.textContent)`,
    );

  it('shows every Traffic column header whole, with the details closed, at any width', async () => {
    await page.getByTestId('nav-traffic').click();
    await page.getByRole('grid').waitFor(WAIT);
    try {
      for (const width of [1360, 1024, 820]) {
        await page.setViewportSize({ width, height: 900 });
        expect(await clippedHeaders(), `${width} px`).toEqual([]);
      }
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
  });

  /** Where each `[data-section]` is on the page, by its name. */
  async function sections(): Promise<
    Record<string, { left: number; right: number; top: number; width: number; height: number }>
  > {
    return page.evaluate(`Object.fromEntries([...document.querySelectorAll('[data-section]')].map((element) => {
      const box = element.getBoundingClientRect();
      return [element.dataset.section, { left: box.left, right: box.right, top: box.top + window.scrollY, width: box.width, height: box.height }];
    }))`);
  }

  /** The focused element's text, or "body". */
  const focusedText = () =>
    page.evaluate<string>(
      `document.activeElement === document.body ? 'body' : (document.activeElement?.textContent ?? '').trim()`,
    );

  it('lays Access out in two columns on a wide screen, one on a narrow one, and jumps to a section', async () => {
    await page.getByTestId('nav-access').click();
    await page.locator('[data-section="calls-out"] [data-testid="calls-out"]').waitFor(WAIT);
    let at = await sections();
    // Callers in on the left, calls out on the right, side by side; the keys' table under both.
    expect(at['calls-out']!.left).toBeGreaterThanOrEqual(at.policy!.right);
    expect(Math.abs(at['calls-out']!.top - at.policy!.top)).toBeLessThan(2);
    expect(at['a2a-keys']!.width).toBeGreaterThan(at.policy!.width * 1.8);
    await screenshot(page, 'layout-access-1360');

    await page.getByTestId('jump-a2a-keys').click();
    await expect.poll(() => page.evaluate<string>('location.hash'), WAIT).toBe('#/access/a2a-keys');
    await expect.poll(focusedText, WAIT).toBe('A2A keys');
    const top = await page.evaluate<number>(
      `document.querySelector('[data-section="a2a-keys"]').getBoundingClientRect().top`,
    );
    // In view: at the top, or as near as the page's end lets it.
    expect(top).toBeGreaterThanOrEqual(0);
    expect(top).toBeLessThan(450);

    await page.setViewportSize({ width: 900, height: 900 });
    try {
      at = await sections();
      expect(Math.abs(at['calls-out']!.left - at.policy!.left)).toBeLessThan(2);
      expect(at['calls-out']!.top).toBeGreaterThan(at.approved!.top);
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
  });

  it('lays Settings out in two columns on a wide screen, and jumps to a section', async () => {
    await page.getByTestId('nav-settings').click();
    await page.getByLabel('Registry URL').waitFor(WAIT);
    const at = await sections();
    const form = [
      'gateway',
      'tunnel',
      'card',
      'registry',
      'access',
      'outbound',
      'limits',
      'privacy',
      'machine',
    ];
    const lefts = new Set(form.map((name) => Math.round(at[name]!.left)));
    expect(lefts.size).toBe(2);
    // Two columns: the sections stand about half as high as they would one under another.
    const stacked = form.reduce((sum, name) => sum + at[name]!.height, 0);
    const bottom = Math.max(...form.map((name) => at[name]!.top + at[name]!.height));
    expect(bottom - at.gateway!.top).toBeLessThan(stacked * 0.7);
    await screenshot(page, 'layout-settings-1360');

    await page.getByTestId('jump-machine').click();
    await expect.poll(focusedText, WAIT).toBe('This machine');
    await page.getByTestId('jump-console').click();
    await expect.poll(focusedText, WAIT).toBe('Console access');
  });

  it('never breaks a key id, even on a narrow window', async () => {
    const issued = await fetch(`${stack.console.url}/api/a2a/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.console.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Layout test agent with a long name that takes room' }),
    });
    expect(issued.status).toBe(201);
    await page.setViewportSize({ width: 360, height: 800 });
    try {
      for (const [tab, selector] of [
        ['nav-keys', '[data-testid="key-row"] code.key-id'],
        ['nav-access', '[data-testid="a2a-key-row"] code.key-id'],
      ] as const) {
        await page.getByTestId(tab).click();
        await page.locator(selector).first().waitFor(WAIT);
        const { text, starts } = await lineStarts(page, selector);
        expect(text.length).toBeGreaterThan(5);
        expect(starts, `${tab}: "${text}" breaks`).toEqual([]);
      }
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
  });

  for (const width of [1360, 1100, 1024]) {
    it(`keeps each agent's host and port in view with the Traffic details open (${width} px)`, async () => {
      expect((await stack.signedCall('a row to open')).status).toBe(200);
      await page.setViewportSize({ width, height: 900 });
      await page.getByTestId('nav-traffic').click();
      const rows = page.getByTestId('traffic-row');
      await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(0);
      await rows.first().click();
      await expect
        .poll(() => attr(page.getByTestId('traffic-details'), 'data-entry-id'), WAIT)
        .not.toBeNull();

      // Each row's agent cell: the text a person sees, and whether the cell (or the text in it) is cut off.
      const seen = (await page.evaluate(
        `[...document.querySelectorAll('[role="gridcell"].agent-cell')].map((cell) => ({
          text: cell.innerText.trim(),
          clipped: [cell, cell.querySelector('.agent-text')].some((e) => e && e.scrollWidth > e.clientWidth),
        }))`,
      )) as { text: string; clipped: boolean }[];
      expect(seen.length).toBeGreaterThan(0);
      const peer = stack.peer.id.replace('agent://', '');
      expect(seen.some((cell) => cell.text.endsWith(peer))).toBe(true);
      expect(seen.filter((cell) => cell.clipped)).toEqual([]);
      // Nor is a column's header ("PROTO…" was).
      expect(await clippedHeaders()).toEqual([]);
      await screenshot(page, `layout-traffic-details-${width}`, false);
      await page.getByRole('button', { name: 'Close details' }).click();
    });
  }
});
