// Layout as a person sees it (issue 16), in Debian's Chromium: an agent id or URL wraps between names (after
// `agent://`, before a dot or the port), never inside one; with the Traffic details pane open, the agent
// column still shows each agent's host and port. Measured in the page (where each character's line is, and
// whether a cell's text overflows it), against the same stack as console.e2e.test.ts.
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
      await screenshot(page, `layout-traffic-details-${width}`, false);
      await page.getByRole('button', { name: 'Close details' }).click();
    });
  }
});
