// End to end in a real browser (issue 4): the headless app with the gateway double, the loopback tunnel and
// the registry double; the operator console opened in Debian's Chromium with its token; each page checked as
// a person would, by roles, labels and test ids (renderer/README.md). Screenshots: test-results/e2e/*.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { appFetch } from '../../src/lib/http.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  CHROMIUM,
  SCREENSHOTS,
  UI_INDEX,
  attr,
  attrs,
  hasBuiltUi,
  hasChromium,
  launchChromium,
  screenshot,
  text,
  watchProblems,
} from './browser.js';
import { mergeSnippetInto } from '../helpers/openclaw-config.js';
import { startStack, type Stack } from './stack.js';

/** Every wait in the browser: generous, so a loaded CI machine does not flake; the file takes a few seconds. */
const WAIT = { timeout: 10_000 };
/** "Live": an envelope shows in Traffic within this long of its reply. */
const LIVE_MS = 3_000;

if (!hasChromium) {
  console.warn(
    `\n!!! SKIPPING the console end-to-end tests: ${CHROMIUM} is missing. ` +
      'Install Debian\'s "chromium" package (apt-get install chromium; .ci/run does) to run them. !!!\n',
  );
}

describe.skipIf(!hasChromium)('the operator console in Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[] = [];

  beforeAll(async () => {
    if (!hasBuiltUi()) {
      throw new Error(`The console UI is not built (${UI_INDEX} is missing): run \`npm run build\` first.`);
    }
    // One after the other, so a failure in either leaves nothing that afterAll cannot close.
    browser = await launchChromium();
    stack = await startStack();
    context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT.timeout);
    problems = watchProblems(page, 'console page');
    await page.goto(`${stack.console.url}/#token=${stack.console.token}`);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  /** Navigates by the nav link, as a person would, and waits until it is the current page. */
  async function open(name: 'Overview' | 'Traffic' | 'Skills' | 'Keys' | 'Registry' | 'Settings') {
    const link = page.getByTestId(`nav-${name.toLowerCase()}`);
    await link.click();
    await expect.poll(() => attr(link, 'aria-current'), WAIT).toBe('page');
  }

  it('takes the token from the URL, hides it, and streams live', async () => {
    await expect.poll(() => attr(page.getByTestId('connection-state'), 'data-state'), WAIT).toBe('live');
    expect(page.url()).not.toContain('token=');
    expect(page.url()).not.toContain(stack.console.token);
    expect(await page.title()).toBe('Overview · Agent Bridge');
  });

  it('Overview: identity, public URL, tunnel online and the gateway reachable', async () => {
    const publicUrl = stack.agent.app.agentUrl;
    expect(publicUrl).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    await expect.poll(() => text(page.getByTestId('agent-id')), WAIT).toBe(stack.agentId());
    await expect.poll(() => text(page.getByTestId('agent-url')), WAIT).toBe(publicUrl);

    const tunnel = page.getByTestId('tunnel-state');
    await expect.poll(() => attr(tunnel.locator('[data-state]'), 'data-state'), WAIT).toBe('online');
    expect(await text(tunnel)).toContain(publicUrl);

    const gateway = page.getByRole('region', { name: 'Gateway', exact: true });
    await expect.poll(() => text(gateway), WAIT).toContain('Reachable');
    expect(await text(gateway)).toContain(stack.gateway.url);
    expect(await page.getByTestId('gateway-problem').count()).toBe(0);

    // A2A callers find the agent card at the public address; no key issued yet.
    await expect
      .poll(() => text(page.getByTestId('a2a-card-url')), WAIT)
      .toBe(`${publicUrl}/.well-known/agent-card.json`);
    expect(await attr(page.getByTestId('a2a-key-count'), 'data-count')).toBe('0');
  });

  it('Overview: a disabled chat endpoint shows its diagnosis and fix; the self-test shows the failing stage', async () => {
    stack.gateway.set({ behaviour: 'disabled-404' });
    try {
      const reply = await stack.signedCall('the endpoint is off');
      expect(reply.status).toBeGreaterThanOrEqual(500);

      const problem = page.getByTestId('gateway-problem');
      await expect
        .poll(() => text(problem), WAIT)
        .toContain('gateway.http.endpoints.chatCompletions.enabled');
      expect(await text(problem)).toMatch(/Fix:/);
      expect(await text(page.getByRole('region', { name: 'Gateway', exact: true }))).toContain('Problem');
      expect(await text(page.getByTestId('agent-identity'))).toContain('Degraded');

      // The self-test reaches the gateway through the public URL: that stage fails, the next never runs.
      await page.getByRole('button', { name: 'Test', exact: true }).click();
      const result = page.getByTestId('selftest-result');
      await expect.poll(() => attr(result, 'data-ok'), WAIT).toBe('false');
      const stages = page.getByTestId('selftest-stage');
      expect(await attrs(stages, 'data-stage')).toEqual([
        'resolve',
        'card',
        'signature',
        'gateway',
        'reply-signature',
      ]);
      expect(await attrs(stages, 'data-state')).toEqual(['pass', 'pass', 'pass', 'fail', 'not-run']);
      await screenshot(page, 'overview-gateway-problem');
    } finally {
      stack.gateway.set({ behaviour: 'ok' });
    }
  });

  it('Overview: with the gateway back, the problem clears and every self-test stage passes', async () => {
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    const result = page.getByTestId('selftest-result');
    await expect.poll(() => attr(result, 'data-ok'), WAIT).toBe('true');
    expect(await attrs(page.getByTestId('selftest-stage'), 'data-state')).toEqual([
      'pass',
      'pass',
      'pass',
      'pass',
      'pass',
    ]);
    expect(await text(result)).toContain(stack.agent.app.agentUrl);
    await expect.poll(() => page.getByTestId('gateway-problem').count(), WAIT).toBe(0);
    await expect.poll(() => text(page.getByTestId('agent-identity')), WAIT).toContain('Healthy');
    // A chat call must not make the console forget the last health check.
    await expect
      .poll(() => text(page.getByRole('region', { name: 'Gateway', exact: true })), WAIT)
      .toContain('Reachable');
    await screenshot(page, 'overview');
  });

  it('Traffic: signed envelopes appear live, a filter narrows them, details say why a tampered one was refused', async () => {
    await open('Traffic');
    const grid = page.getByRole('grid', { name: 'Calls, newest first' });
    const rows = grid.getByTestId('traffic-row');
    const count = page.getByTestId('traffic-count');
    // The overview's calls (the failed one, the self-tests) are already in the log.
    await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(0);
    const before = await rows.count();
    const newestBefore = Number(await attr(rows, 'data-entry-id'));

    // Three signed envelopes from the peer, each with its own trace id; they stream in while we watch.
    const run = Math.random().toString(36).slice(2, 8);
    const traces = [1, 2, 3].map((n) => `e2e-${run}-live-${n}`);
    for (const [n, trace] of traces.entries()) {
      expect((await stack.signedCall(`live ${n}`, trace)).status).toBe(200);
    }
    const sent = performance.now();
    await expect.poll(() => rows.count(), { timeout: LIVE_MS }).toBe(before + 3);
    const liveMs = Math.round(performance.now() - sent);
    const newest = await attrs(rows, 'data-entry-id');
    expect(newest.slice(0, 3).map(Number)).toEqual([newestBefore + 3, newestBefore + 2, newestBefore + 1]);
    expect((await attrs(rows, 'data-verdict')).slice(0, 3)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(await text(rows.first())).toContain(stack.peer.id);
    expect(await text(count)).toBe(`${before + 3} calls`);
    await screenshot(page, 'traffic-live');

    // A tampered envelope: refused at the signature step, and it shows up live too.
    const tampered = await stack.tamperedCall(`e2e-${run}-tampered`);
    expect(tampered.status).toBe(401);
    await expect.poll(() => attr(rows, 'data-verdict'), { timeout: LIVE_MS }).toBe('signature');
    const total = before + 4;

    // The search box narrows to one envelope by its trace id, then Verdict narrows to the refused ones.
    const search = page.getByLabel('Search');
    await search.fill(traces[1]!);
    await expect.poll(() => rows.count(), WAIT).toBe(1);
    expect(await attr(rows, 'data-entry-id')).toBe(String(newestBefore + 2));
    expect(await text(count)).toBe(`1 of ${total} calls`);
    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await expect.poll(() => rows.count(), WAIT).toBe(total);

    await page.getByLabel('Verdict').selectOption('refused');
    await expect.poll(async () => (await attrs(rows, 'data-verdict')).includes('accepted'), WAIT).toBe(false);
    const refused = await rows.count();
    expect(refused).toBeGreaterThanOrEqual(2); // the tampered one and the disabled endpoint's
    expect(refused).toBeLessThan(total);
    expect(await text(count)).toBe(`${refused} of ${total} calls`);

    // Its details: the steps before the signature passed, the signature failed with the reason, later never ran.
    const row = rows.and(page.locator('[data-verdict="signature"]')).first();
    const id = await attr(row, 'data-entry-id');
    await row.click();
    const details = page.getByTestId('traffic-details');
    await expect.poll(() => attr(details, 'data-entry-id'), WAIT).toBe(id);
    const steps = details.getByTestId('verification-step');
    expect(await attrs(steps, 'data-step')).toEqual([
      'size',
      'shape',
      'timestamp',
      'signature',
      'delegation',
      'chain',
      'trust',
      'rate-limit',
      'nonce',
      'skill',
      'input',
      'access',
      'handler',
    ]);
    expect(await attrs(steps, 'data-state')).toEqual([
      'pass',
      'pass',
      'pass',
      'fail',
      'not-run',
      'not-run',
      'not-run',
      'not-run',
      'not-run',
      'not-run',
      'not-run',
      'not-run',
      'not-run',
    ]);
    const failed = await text(details.locator('[data-testid="verification-step"][data-step="signature"]'));
    expect(failed).toContain('failed');
    expect(failed).toContain(String(tampered.json.code));
    expect(failed).toContain(String(tampered.json.message));
    expect(await text(details)).toContain(`e2e-${run}-tampered`);
    expect(await text(details)).toContain('401');
    await screenshot(page, 'traffic');
    console.warn(`e2e: ${traces.length} envelopes appeared in Traffic ${liveMs} ms after their replies`);
  });

  it("Access: a new sender's call waits under Access; the operator approves it and the retry succeeds", async () => {
    const stranger = stack.stranger.id;
    const refused = await stack.strangerCall('hello, may I talk to your agent?');
    expect(refused.status).toBe(403);
    expect(refused.json.message).toMatch(/waits for their approval/);
    const code = /request ([A-Z2-9]{4}-[A-Z2-9]{4})/.exec(String(refused.json.message))?.[1];
    expect(code).toBeDefined();

    // The tab counts it at once (a live event), and the page lists it with its code and first words.
    const tab = page.getByTestId('nav-access');
    await expect.poll(() => text(tab), { timeout: LIVE_MS }).toContain('(1)');
    await tab.click();
    const row = page.locator(`[data-testid="pending-row"][data-sender="${stranger}"]`);
    await expect.poll(() => row.count(), WAIT).toBe(1);
    expect(await text(row)).toContain(code!);
    expect(await text(row)).toContain('hello, may I talk to your agent?');
    await screenshot(page, 'access-pending');

    await row.getByTestId('approve-button').click();
    await expect.poll(() => row.count(), WAIT).toBe(0);
    const approved = page.locator(`[data-testid="approved-row"][data-sender="${stranger}"]`);
    await expect.poll(() => approved.count(), WAIT).toBe(1);
    await expect.poll(() => text(tab), WAIT).not.toContain('(1)');

    const retry = await stack.strangerCall('thanks: now?');
    expect(retry.status, retry.text).toBe(200);
    expect((retry.json.result as { reply?: string }).reply).toBe('echo: thanks: now?');
    await screenshot(page, 'access');
  });

  it('Access: an approved sender whose call is signed with a key its approval does not know asks again, and the page says why', async () => {
    const stranger = stack.stranger.id;
    // A new key, announced by no call signed with the old one: as a new holder of the id would sign.
    stack.stranger.app.keys.rotate();
    const refused = await stack.strangerCall('it is still me, with a new key');
    expect(refused.status, refused.text).toBe(403);
    const row = page.locator(`[data-testid="pending-row"][data-sender="${stranger}"]`);
    await expect.poll(() => row.count(), WAIT).toBe(1);
    const note = row.getByTestId('pending-note');
    await expect
      .poll(() => text(note), WAIT)
      .toContain('It was approved before, but this call was signed with a key that approval does not know');
    await screenshot(page, 'access-key-changed');
    await row.getByTestId('approve-button').click();
    await expect.poll(() => row.count(), WAIT).toBe(0);
    expect((await stack.strangerCall('and now?')).status).toBe(200);
  });

  it("Traffic: a call the operator's agent makes through the MCP server shows as outbound, its reply verified", async () => {
    // The operator's agent (here: the official MCP client) calls the peer through the bridge.
    const { token } = JSON.parse(readFileSync(stack.console.mcp.file, 'utf8')) as { token: string };
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(stack.console.mcp.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: 'samvad_call',
        arguments: { agent: stack.peer.id, skill: 'chat', payload: { message: 'hello from the operator' } },
      })) as { isError?: boolean; content: { type: string; text: string }[] };
      expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
      expect(result.content.map((part) => part.text).join('')).toContain('echo: hello from the operator');
    } finally {
      await client.close();
    }

    await open('Traffic');
    await page.getByTestId('direction-filter').selectOption('out');
    const rows = page.getByTestId('traffic-row');
    await expect.poll(() => rows.count(), { timeout: LIVE_MS }).toBe(1);
    expect(await attr(rows, 'data-direction')).toBe('out');
    expect(await text(rows)).toContain(stack.peer.id);
    await rows.click();
    const details = page.getByTestId('traffic-details');
    await expect
      .poll(() => attr(details.getByTestId('reply-signature'), 'data-signature'), WAIT)
      .toBe('verified');
    await screenshot(page, 'traffic-outbound');
    await page.getByTestId('direction-filter').selectOption('');
  });

  it('Traffic: A2A calls show their own checks, nothing ticked that did not run; a revoked key is named and marked', async () => {
    // Issue 26, items 6 and 7: real A2A calls, one with a key in use, one with a revoked key.
    const keys = stack.agent.app.a2aKeys;
    const current = await keys.issue({ name: 'Research bot' });
    const old = await keys.issue({ name: 'Old partner' });
    await keys.revoke(old.key.id);
    const send = (secret: string) =>
      fetch(`${stack.agent.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'A2A-Version': '1.0',
          Authorization: `Bearer ${secret}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: {
            message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
          },
        }),
      });
    expect((await send(current.secret)).status).toBe(200);
    expect((await send(old.secret)).status).toBe(401);

    await open('Traffic');
    await page.getByTestId('protocol-filter').selectOption('a2a');
    const rows = page.getByTestId('traffic-row');
    await expect.poll(() => rows.count(), { timeout: LIVE_MS }).toBe(2);
    expect(await text(rows.getByTestId('protocol-badge').first())).toBe('A2A');
    const stateOf = async () =>
      (await attrs(page.getByTestId('verification-step'), 'data-step')).join(',') +
      ' ' +
      (await attrs(page.getByTestId('verification-step'), 'data-state')).join(',');

    // The answered call: the door's own steps, each passed; none of SAMVAD's.
    const answered = rows.and(page.locator('[data-verdict="accepted"]'));
    expect(await text(answered.getByTestId('traffic-agent'))).toBe(`Research bot a2a-key:${current.key.id}`);
    await answered.click();
    await expect.poll(() => text(page.getByTestId('a2a-method')), WAIT).toBe('SendMessage');
    expect(await text(page.getByTestId('a2a-wire'))).toBe('v1.0, JSON-RPC');
    expect(await stateOf()).toBe('key,request,limits,screen,task pass,pass,pass,pass,pass');
    expect(await text(page.getByTestId('traffic-details'))).not.toMatch(/Signature verifies|Nonce not seen/);

    // The revoked key: named and marked in the row and the details; refused at its key, nothing else ran.
    const revoked = rows.and(page.locator('[data-verdict="access"]'));
    expect(await text(revoked.getByTestId('traffic-agent'))).toBe(`Old partner a2a-key:${old.key.id}`);
    expect(await text(revoked.getByTestId('traffic-key-status'))).toBe('revoked');
    await revoked.click();
    await expect.poll(() => attr(page.getByTestId('key-status'), 'data-status'), WAIT).toBe('revoked');
    expect(await stateOf()).toBe('key,request,limits,screen,task fail,not-run,not-run,not-run,not-run');
    expect(await text(page.getByTestId('a2a-method'))).toBe(
      'not read: the call was refused before its body was read',
    );
    expect(await text(page.getByTestId('caller-name'))).toContain('Old partner');
    await screenshot(page, 'traffic-a2a-revoked');
    await page.getByTestId('protocol-filter').selectOption('');

    // The Access page says the revoked key is still tried.
    await page.getByTestId('nav-access').click();
    const row = page.locator(`[data-testid="a2a-key-row"][data-key-id="${old.key.id}"]`);
    await expect
      .poll(() => text(row.getByTestId('a2a-key-still-used')), WAIT)
      .toMatch(/^Still used: refused/);
  });

  it('Keys: rotating (after the confirmation) adds a key that the public card lists', async () => {
    await open('Keys');
    const rows = page.getByTestId('key-row');
    await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(0);
    const before = await attrs(rows, 'data-kid');
    expect(before.every((kid) => kid !== null)).toBe(true);

    await page.getByRole('button', { name: 'Rotate key…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor({ state: 'visible', ...WAIT });
    expect(await text(dialog)).toMatch(/callers with a cached card keep\s+working/);
    await screenshot(page, 'keys-rotate-dialog', false);
    await dialog.getByRole('button', { name: 'Rotate', exact: true }).click();
    await dialog.waitFor({ state: 'hidden', ...WAIT });

    await expect.poll(() => rows.count(), WAIT).toBe(before.length + 1);
    const signing = rows.and(page.locator('[data-signing="true"]'));
    const kid = await attr(signing, 'data-kid');
    expect(kid).not.toBeNull();
    expect(before).not.toContain(kid);
    expect(await attr(signing, 'data-active')).toBe('true');
    expect(await text(page.getByTestId('keys-result'))).toMatch(/Rotated/);

    const card = await stack.publicCard();
    expect(card.publicKeys.find((key) => key.kid === kid)?.active).toBe(true);
    await screenshot(page, 'keys');
  });

  it('Registry: registering shows the record', async () => {
    await open('Registry');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    const record = page.getByTestId('registry-record');
    await expect.poll(() => text(record), WAIT).toContain(stack.agentId());
    expect(await text(record)).toContain(stack.agent.app.agentUrl);
    expect(await text(record)).toContain(stack.registry.url);
    expect(await page.getByRole('button', { name: 'Re-register' }).count()).toBe(1);
    expect(stack.registry.records.get(stack.agent.app.agentUrl)?.id).toBe(stack.agentId());
    await screenshot(page, 'registry');
  });

  it('Settings: a new rate limit is saved, applied at once, and on the card', async () => {
    await open('Settings');
    const rpm = page.getByLabel('Requests per minute (all callers)');
    await rpm.waitFor(WAIT);
    const next = stack.agent.app.currentSettings.rpm === 321 ? 322 : 321;
    await rpm.fill(String(next));
    await page.getByRole('button', { name: 'Save changes' }).click();
    const saved = page.getByTestId('settings-saved');
    await expect.poll(() => text(saved), WAIT).toContain('Applied now');
    expect(await text(saved)).toContain('Requests per minute (all callers)');
    expect(await rpm.inputValue()).toBe(String(next));
    expect(stack.agent.app.currentSettings.rpm).toBe(next);
    expect((await stack.publicCard()).rateLimit.requestsPerMinute).toBe(next);
    await screenshot(page, 'settings');
    // The full page shows the sticky save bar over the middle; this one shows the saved field beside it.
    await page.evaluate(
      `document.querySelector('[data-section="limits"]').scrollIntoView({ block: 'center' })`,
    );
    await screenshot(page, 'settings-rate-limits', false);
  });

  it('an agent for callers that exposes host tools is a red warning on the Overview and in Settings', async () => {
    await open('Settings');
    const agentField = page.getByLabel('Agent for callers');
    await agentField.waitFor(WAIT);
    expect(await agentField.inputValue()).toBe('public');
    expect(await page.getByTestId('host-tools-warning').count()).toBe(0);
    await agentField.fill('main');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => text(page.getByTestId('settings-saved')), WAIT).toContain('Applied now');
    try {
      const inSettings = page.getByTestId('host-tools-warning');
      await expect.poll(() => inSettings.count(), WAIT).toBeGreaterThan(0);
      expect(await text(inSettings.first())).toMatch(/exec/);

      await open('Overview');
      const warning = page.getByTestId('host-tools-warning');
      await expect.poll(() => text(warning), WAIT).toMatch(/exec/);
      expect(await text(warning)).toMatch(/write/);
      expect(await text(page.getByTestId('agent-identity'))).toContain('Degraded');
      // Getting started does not count the gateway step as done.
      const step = page.locator('[data-testid="setup-step"][data-step="gateway"]');
      expect(await attr(step, 'data-state')).toBe('todo');
      await screenshot(page, 'overview-host-tools');
    } finally {
      stack.agent.app.updateSettings({ gatewayAgent: 'public' });
      await stack.agent.app.gatewayTarget.reset();
    }
    await expect.poll(() => page.getByTestId('host-tools-warning').count(), WAIT).toBe(0);
  });

  it('Skills: "Research" published from the console, its agent merged from the proposed config, is on both cards', async () => {
    await open('Skills');
    await page.getByRole('button', { name: 'Add a skill' }).click();
    const form = page.getByTestId('skill-form');
    await form.getByLabel('Id', { exact: true }).fill('research');
    await form.getByLabel('Name', { exact: true }).fill('Research');
    await form.getByLabel('Description').fill('Searches the web and answers with its sources.');
    await form.getByRole('button', { name: 'Propose the config' }).click();
    const snippet = page.getByTestId('skill-snippet');
    await snippet.waitFor(WAIT);
    expect(await text(page.getByTestId('skill-merge-into'))).toBe(stack.openclawConfig);
    const outcome = page.getByTestId('skill-agent-outcome');
    expect(await attr(outcome, 'data-state')).toBe('not-applied');

    // The operator merges it; OpenClaw reloads and lists the new agent.
    mergeSnippetInto(stack.openclawConfig, await text(snippet));
    stack.gateway.set({ agents: ['main', 'public', 'research'] });
    await form.getByRole('button', { name: 'Check again' }).click();
    await expect.poll(() => attr(outcome, 'data-state'), WAIT).toBe('as-intended');
    expect(await attr(page.getByTestId('actual-class'), 'data-class')).toBe('web');
    await screenshot(page, 'skills-add');

    await form.getByRole('radio', { name: 'Public' }).check();
    await form.getByRole('button', { name: 'Add skill' }).click();
    await page.getByTestId('skills-result').waitFor(WAIT);
    const card = page.locator('[data-testid="skill-card"][data-skill="research"]');
    expect(await attr(card, 'data-state')).toBe('serving');
    expect(await attr(card, 'data-class')).toBe('web');
    expect(await text(card.getByTestId('skill-tools'))).toBe('web_fetchweb_search');

    // Both cards: SAMVAD's lists the skill; A2A's own card for it is where the page says.
    expect((await stack.publicCard()).skills.map((skill) => skill.id)).toEqual(['chat', 'research']);
    const a2aCard = await text(card.getByTestId('skill-card-url'));
    expect(a2aCard).toBe(`${stack.agent.app.agentUrl}/a2a/skills/research/.well-known/agent-card.json`);
    const response = await appFetch(a2aCard);
    expect(response.status).toBe(200);
    const served = (await response.json()) as { skills: { id: string; name: string }[] };
    expect(served.skills.map(({ id, name }) => ({ id, name }))).toEqual([
      { id: 'research', name: 'Research' },
    ]);
    expect(JSON.stringify(served)).toContain('/a2a/skills/research/jsonrpc');
    await screenshot(page, 'skills');
  });

  it('a wrong token is refused: the token screen says how to get in, and the right token opens the console', async () => {
    const fresh = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    try {
      const other = await fresh.newPage();
      other.setDefaultTimeout(WAIT.timeout);
      // The refused token's 401 is expected in its console; anything else is a problem.
      const otherProblems = watchProblems(other, 'token page', /\b401\b/);
      await other.goto(`${stack.console.url}/#token=wrong`);
      const screen = other.getByTestId('token-screen');
      await expect.poll(() => text(screen), WAIT).toContain('The console refused this token.');
      expect(await text(screen)).toContain('How to get in');
      expect(await text(screen)).toContain('console.json');
      expect(other.url()).not.toContain('token=');
      await screenshot(other, 'token');

      await other
        .getByLabel('Console token or URL')
        .fill(`${stack.console.url}/#token=${stack.console.token}`);
      await other.getByRole('button', { name: 'Open console' }).click();
      await expect.poll(() => text(other.getByTestId('agent-id')), WAIT).toBe(stack.agentId());
      expect(otherProblems).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  it('had no page errors and no CSP violations', () => {
    expect(problems).toEqual([]);
    console.warn(`e2e: screenshots in ${SCREENSHOTS}`);
  });
});
