// 7b. The console UI with a full envelope log, in Debian's Chromium (playwright-core): the built UI
// (dist/renderer, built here when missing) served by the mock console (renderer/dev/mock-console.ts) with
// 10,000 made-up traffic entries. The Traffic page: time to its first frame with the 10,000 rows (a reload:
// fetch, parse, render) and after a tab switch (data already loaded), the row elements in the DOM (a
// virtualised list keeps a small window), the frame times while the list is scrolled over its full height
// in requestAnimationFrame steps, and the time a text filter over the 10,000 rows takes to show its count.
// Every time is taken inside the page (performance.now() and requestAnimationFrame timestamps), not over
// the DevTools round trip. The page scripts are strings: this project type-checks bench/ without the DOM
// library, and tsx's helpers would not survive the trip into the page.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEV_TOKEN, startMockConsole } from '../renderer/dev/mock-console.js';
import { percentile } from './stats.js';

export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless=new',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BUILT_UI = fileURLToPath(new URL('../dist/renderer/index.html', import.meta.url));
/** A frame longer than this is a visible stutter (jank). */
export const LONG_FRAME_MS = 50;
const VIEWPORT = { width: 1360, height: 900 };
const TIMEOUT_MS = 30_000;

export interface UiOptions {
  /** Traffic entries the mock console serves. */
  entries: number;
  /** How long the scroll over the list's full height lasts. */
  scrollMs: number;
  /** Filter applied and cleared this many times. */
  filterRuns: number;
  /** The search text of the filter. */
  filterText: string;
}

export interface FrameStats {
  frames: number;
  durationMs: number;
  p50: number;
  p95: number;
  max: number;
  /** Share of frames longer than LONG_FRAME_MS. */
  longShare: number;
}

export interface UiResult {
  chromium: string;
  entries: number;
  /** When dist/renderer was missing: how long `npx vite build` took, ms. */
  builtMs?: number;
  /** A reload of the Traffic page: from navigation start to the first frame after its rows appear, ms. */
  coldMs: number;
  /** From a click on Traffic (the log already loaded) to the first frame after its rows appear, ms. */
  switchMs: number;
  /** The entries the page said it holds once loaded. */
  shownEntries: number;
  /** Row elements in the DOM after the load, and the most seen in any frame while scrolling. */
  rows: number;
  maxRowsScrolling: number;
  scroll: FrameStats & {
    /** The list's scroll range, px. */
    distancePx: number;
    /** After the scroll: the last row in the DOM is the list's last entry (the window followed). */
    reachedEnd: boolean;
  };
  filter: {
    text: string;
    /** Rows left by the filter. */
    matches: number;
    /** From the input event to the count showing the narrowed rows, ms, each run. */
    applyMs: number[];
    /** From the input event (filter cleared) to the list holding every entry again, ms, each run. */
    clearMs: number[];
  };
  /** Uncaught errors in the page, if any. */
  pageErrors: string[];
}

export type UiOutcome = UiResult | { skipped: string } | { error: string };

export async function measureUi(
  options: UiOptions,
  progress: (step: string) => void = () => {},
): Promise<UiOutcome> {
  if (!existsSync(CHROMIUM)) return { skipped: `${CHROMIUM} not found (Debian's chromium package)` };
  let builtMs: number | undefined;
  if (!existsSync(BUILT_UI)) {
    progress('7. console UI: dist/renderer is missing, building it (npx vite build)');
    const started = performance.now();
    await promisify(execFile)('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: ROOT });
    builtMs = performance.now() - started;
    if (!existsSync(BUILT_UI)) return { error: `npx vite build did not produce ${BUILT_UI}` };
  }
  progress(`7. console UI: Traffic with ${options.entries.toLocaleString('en')} entries in Chromium`);
  const mock = await startMockConsole({ entries: options.entries, streamEveryMs: 0, scenario: 'healthy' });
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: VIEWPORT, locale: 'en-US' });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // Runs at the start of every document: notes the first frame that shows the Traffic rows.
    await page.addInitScript(firstRowsWatcher(options.entries));

    // Sign in (the token moves from the fragment to sessionStorage), open Traffic, then reload it cold.
    await page.goto(`${mock.url}/#token=${DEV_TOKEN}`);
    await page.getByTestId('nav-traffic').click();
    await waitInPage(page, 'window.__benchFirstRows');
    await page.reload();
    const cold = await firstRows(page);

    // A tab switch: the log is already in memory, only the page renders.
    await page.getByTestId('nav-overview').click();
    await page.getByTestId('gateway-state').waitFor();
    const switchMs = await page.evaluate<number>(TAB_SWITCH);

    progress('7. console UI: scrolling and filtering');
    const scroll = await page.evaluate<ScrollPage>(scrollScript(options.scrollMs));
    if ('error' in scroll) throw new Error(scroll.error);

    const applyMs: number[] = [];
    const clearMs: number[] = [];
    let matches = NaN;
    const search = page.getByLabel('Search');
    for (let run = 0; run < options.filterRuns; run++) {
      const applied = await timeFilter(page, () => search.fill(options.filterText), 'narrowed', cold.entries);
      applyMs.push(applied.ms);
      matches = applied.rows;
      const cleared = await timeFilter(page, () => search.fill(''), 'all', cold.entries);
      clearMs.push(cleared.ms);
    }

    return {
      chromium: browser.version(),
      entries: options.entries,
      ...(builtMs === undefined ? {} : { builtMs }),
      coldMs: cold.paintedMs,
      switchMs,
      shownEntries: cold.entries,
      rows: cold.rows,
      maxRowsScrolling: scroll.maxRows,
      scroll: {
        ...frameStats(scroll.frames),
        distancePx: scroll.distance,
        reachedEnd: scroll.lastRowIndex === cold.entries + 1,
      },
      filter: { text: options.filterText, matches, applyMs, clearMs },
      pageErrors,
    };
  } finally {
    await browser?.close();
    await mock.close();
  }
}

/** Frame times from requestAnimationFrame timestamps: each the gap to the previous frame. */
export function frameStats(timestamps: number[]): FrameStats {
  const gaps = timestamps.slice(1).map((t, i) => t - (timestamps[i] as number));
  const sorted = Float64Array.from(gaps).sort();
  return {
    frames: gaps.length,
    durationMs: (timestamps.at(-1) ?? 0) - (timestamps[0] ?? 0),
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : NaN,
    longShare: gaps.length ? gaps.filter((gap) => gap > LONG_FRAME_MS).length / gaps.length : NaN,
  };
}

// ---- What runs in the page ----

/**
 * Resolves once `condition` (an expression) holds in the page, checked at every frame. Not
 * page.waitForFunction: it evaluates strings with eval(), which the console's CSP (kept here) forbids.
 */
async function waitInPage(page: Page, condition: string): Promise<void> {
  const waited = page.evaluate(`new Promise((done) => {
    const poll = () => ((${condition}) ? done(true) : requestAnimationFrame(poll));
    poll();
  })`);
  const timeout = new Promise<never>((_, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the page did not reach ${condition} within ${TIMEOUT_MS / 1000} s`)),
      TIMEOUT_MS,
    );
    void waited.finally(() => clearTimeout(timer)).catch(() => undefined);
  });
  await Promise.race([waited, timeout]);
}

/** The rows of the list, the grid's row count (header included) and the count line's first number. */
const PAGE_HELPERS = `
  const rowsInDom = () => document.querySelectorAll('[data-testid="traffic-row"]').length;
  const shownEntries = () => {
    const text = document.querySelector('[data-testid="traffic-count"]')?.textContent ?? '';
    return Number((text.trim().split(' ')[0] ?? '').replace(/\\D/g, ''));
  };
  const gridRows = () => {
    const grid = document.querySelector('[role="grid"][aria-label="Calls, newest first"]');
    return grid ? Number(grid.getAttribute('aria-rowcount')) - 1 : -1;
  };
`;

/**
 * At each frame from the document's start: once the Traffic page shows rows and its count says `entries`,
 * the next frame's timestamp (the frame with the rows was painted by then) goes to window.__benchFirstRows.
 */
function firstRowsWatcher(entries: number): string {
  return `(() => {
    ${PAGE_HELPERS}
    const poll = () => {
      if (location.hash === '#/traffic' && rowsInDom() > 0 && shownEntries() >= ${entries}) {
        const shownMs = performance.now();
        requestAnimationFrame((paintedMs) => {
          window.__benchFirstRows = { shownMs, paintedMs, rows: rowsInDom(), entries: shownEntries() };
        });
      } else requestAnimationFrame(poll);
    };
    requestAnimationFrame(poll);
  })()`;
}

interface FirstRows {
  /** ms from navigation start: the frame in which the rows were first in the DOM, and the one after. */
  shownMs: number;
  paintedMs: number;
  rows: number;
  entries: number;
}

async function firstRows(page: Page): Promise<FirstRows> {
  await waitInPage(page, 'window.__benchFirstRows');
  return page.evaluate<FirstRows>('window.__benchFirstRows');
}

/** Clicks Traffic and resolves with the time to the first frame after its rows are in the DOM. */
const TAB_SWITCH = `(async () => {
  ${PAGE_HELPERS}
  const started = performance.now();
  document.querySelector('[data-testid="nav-traffic"]').click();
  await new Promise((done) => {
    const poll = () => (rowsInDom() > 0 ? requestAnimationFrame(done) : requestAnimationFrame(poll));
    requestAnimationFrame(poll);
  });
  return performance.now() - started;
})()`;

type ScrollPage =
  { error: string } | { frames: number[]; distance: number; maxRows: number; lastRowIndex: number };

/**
 * From the top to the bottom of the list in `durationMs`: at each frame the scroll position follows the
 * time elapsed (a slow frame makes a longer jump, as a fling does), and the frame's timestamp is kept.
 */
function scrollScript(durationMs: number): string {
  return `(async () => {
    ${PAGE_HELPERS}
    const list = document.querySelector('.vlist-scroll');
    if (!list) return { error: 'the Traffic page has no .vlist-scroll element' };
    const frame = () => new Promise((done) => requestAnimationFrame(done));
    list.scrollTop = 0;
    await frame();
    await frame();
    const distance = list.scrollHeight - list.clientHeight;
    const frames = [];
    let maxRows = 0;
    await new Promise((done) => {
      const step = (now) => {
        frames.push(now);
        maxRows = Math.max(maxRows, rowsInDom());
        const progress = Math.min(1, (now - frames[0]) / ${durationMs});
        list.scrollTop = Math.round(progress * distance);
        if (progress < 1) requestAnimationFrame(step);
        else done();
      };
      requestAnimationFrame(step);
    });
    await frame();
    await frame();
    await frame();
    const indexes = [...document.querySelectorAll('[data-testid="traffic-row"]')].map((row) =>
      Number(row.getAttribute('aria-rowindex')),
    );
    return { frames, distance, maxRows, lastRowIndex: Math.max(...indexes) };
  })()`;
}

/**
 * Times one change of the search box: from its input event to the DOM commit (seen by a MutationObserver)
 * after which the grid holds the new rows: fewer than `entries` ('narrowed'), or every entry again ('all').
 */
async function timeFilter(
  page: Page,
  act: () => Promise<void>,
  want: 'narrowed' | 'all',
  entries: number,
): Promise<{ ms: number; rows: number }> {
  await page.evaluate(`(() => {
    ${PAGE_HELPERS}
    const state = (window.__benchFilter = { inputAt: undefined, doneAt: undefined, rows: undefined });
    document.addEventListener('input', () => (state.inputAt ??= performance.now()), { capture: true, once: true });
    const observer = new MutationObserver(() => {
      const rows = gridRows();
      const done = ${want === 'all' ? `rows === ${entries}` : `rows >= 0 && rows < ${entries}`};
      if (state.inputAt === undefined || !done) return;
      state.doneAt = performance.now();
      state.rows = rows;
      observer.disconnect();
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  })()`);
  await act();
  await waitInPage(page, 'window.__benchFilter.doneAt !== undefined');
  const state = await page.evaluate<{ inputAt: number; doneAt: number; rows: number }>(
    'window.__benchFilter',
  );
  return { ms: state.doneAt - state.inputAt, rows: state.rows };
}
