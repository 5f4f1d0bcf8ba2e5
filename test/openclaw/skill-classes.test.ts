/**
 * Opt-in (`npm run test:openclaw`): issue 27, items 2 and 4, on a REAL OpenClaw gateway from a stock config.
 *
 * Each template's agent, as the console proposes it (skillAgentSnippet), merged into the running gateway's
 * openclaw.json: `openclaw config validate` passes, the running gateway takes it by hot reload (same
 * process, the agent listed), the bridge's classifier gives it its template's class, and a chat call to
 * `openclaw/<agent>` offers the stand-in model exactly that class's tools: web search and fetch for
 * Research (whose web_fetch is refused an address on this machine until ssrfPolicy opens it, and then it is
 * host), nothing at all for the restricted agent, the shell and file tools for the sandboxed helper, whose
 * exec then runs in a Podman container OpenClaw starts, whatever the caller's directives (when Podman and the
 * sandbox image are here; scripts/openclaw/sandbox-image.sh builds it). Then a config edit that gives
 * Research `exec`: the classifier says host, and the gateway does offer exec.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENCLAW_VERSION } from '../../scripts/openclaw/paths.js';
import { restrictedAgentSnippet, rosterFacts } from '../../src/bridge/agent-snippet.js';
import { skillAgentSnippet, type SkillSnippetOptions } from '../../src/bridge/skill-snippet.js';
import { SANDBOX_DEFAULT_ALLOW, SANDBOX_DEFAULT_DENY } from '../../src/bridge/tool-catalog.js';
import { classifyAgentTools } from '../../src/bridge/tool-class.js';
import { until } from '../helpers/polling.js';
import { mergeConfig, openclawAvailable, startGateway, stockConfig, type Gateway } from './gateway.js';
import {
  callMarker,
  STANDIN_REPLY,
  messagesText,
  startModelServer,
  toolResults,
  type ModelRequest,
  type ModelServer,
} from './model-server.js';
import { HOST_REACHING, offered } from './offered.js';
import { probePodman, releasePodman, run } from './podman.js';

const available = openclawAvailable();
const mark = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;
/** Tool Search's controls, which every agent that has any tool may be offered (they reach only its own). */
const META = ['tool_call', 'tool_describe', 'tool_search'];

const runtime = available ? await probePodman() : ({ ok: false, why: 'OpenClaw is not installed' } as const);

describe.skipIf(!available)(`real OpenClaw ${OPENCLAW_VERSION}: the tool classes of skills' agents`, () => {
  let model: ModelServer;
  let gateway: Gateway;
  let sandboxUsed = false;

  beforeAll(async () => {
    model = await startModelServer();
    gateway = await startGateway({
      modelBaseUrl: model.baseUrl,
      config: stockConfig,
      ...(runtime.ok ? { env: runtime.env } : {}),
    });
    await until(() => gateway.log().includes('[gateway] ready'), 90_000, 'the gateway to be ready', 200);
  });

  afterAll(async () => {
    // The containers OpenClaw started for this gateway, by its own command.
    if (sandboxUsed) await gateway.cli(['sandbox', 'recreate', '--all', '--force']);
    await gateway?.stop();
    await model?.close();
    releasePodman(runtime);
  });

  const config = () => JSON5.parse<Record<string, unknown>>(readFileSync(gateway.configPath, 'utf8'));
  const count = (text: string) => gateway.log().split(text).length - 1;

  /**
   * Merges `snippet` into the gateway's file as an operator does, checks that `openclaw config validate`
   * takes it without a warning, and waits for the running gateway to apply it by hot reload.
   */
  async function mergeAndReload(snippet: string): Promise<void> {
    const pid = gateway.pid;
    const reloads = count('config hot reload applied');
    const skipped = count('config reload skipped');
    writeFileSync(
      gateway.configPath,
      `${JSON.stringify(mergeConfig(config(), JSON5.parse(snippet)), null, 2)}\n`,
    );
    const validated = await gateway.cli(['config', 'validate']);
    expect(validated.status, validated.out).toBe(0);
    expect(validated.out).toContain('Config valid');
    expect(validated.out).not.toMatch(/warning/i);
    await until(() => count('config hot reload applied') > reloads, 60_000, 'the hot reload', 200);
    expect(count('config reload skipped'), gateway.logTail()).toBe(skipped);
    expect(gateway.pid).toBe(pid);
    expect(gateway.exited()).toBe(false);
  }

  async function listed(): Promise<string[]> {
    const response = await fetch(`${gateway.url}/v1/models`, {
      headers: { authorization: `Bearer ${gateway.token}` },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: { id: string }[] }).data.map((m) => m.id);
  }

  /** A chat call to `openclaw/<agent>`; the stand-in model's requests that carried its text. */
  async function chat(agent: string, text: string, user?: string): Promise<ModelRequest[]> {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: `openclaw/${agent}`,
        messages: [{ role: 'user', content: text }],
        ...(user ? { user } : {}),
      }),
      signal: AbortSignal.timeout(110_000),
    });
    const body = await response.text();
    expect(response.status, body).toBe(200);
    expect(
      (JSON.parse(body) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe(STANDIN_REPLY);
    return model.chatRequests().filter((r) => messagesText(r.body, 'user').includes(text));
  }

  /** What the first model request of a call was offered beyond Tool Search's controls, sorted. */
  function offeredTools(requests: ModelRequest[]): { direct: string[]; beyondMeta: string[] } {
    expect(requests.length, 'model requests for the call').toBeGreaterThan(0);
    const seen = offered(requests[0]!);
    return {
      direct: seen.direct,
      beyondMeta: [...new Set(seen.reachable)].filter((t) => !META.includes(t)).sort(),
    };
  }

  it('Research: the snippet validates, hot reloads, and its agent is web, offered web search and fetch only', async () => {
    await mergeAndReload(skillAgentSnippet('research', 'research', rosterFacts(config())));
    await until(
      async () => (await listed()).includes('openclaw/research'),
      30_000,
      'openclaw/research listed',
      500,
    );

    const view = classifyAgentTools(config(), 'research');
    expect(view).toMatchObject({ class: 'web', tools: ['web_fetch', 'web_search'] });

    const { direct, beyondMeta } = offeredTools(await chat('research', mark('RESEARCH')));
    // Exactly the class's tools: nothing the classifier did not name, and nothing that touches the machine.
    expect(beyondMeta).toEqual(view.tools);
    expect(direct).not.toEqual(expect.arrayContaining(['exec']));
    expect(beyondMeta.filter((tool) => HOST_REACHING.has(tool))).toEqual([]);
  });

  it("Research's web_fetch is refused an address on this machine; opening ssrfPolicy makes it reach it, and host", async () => {
    /** Asks Research to fetch a URL of the stand-in model's server; what the tool said and whether it arrived. */
    const fetchProbe = async (label: string) => {
      const path = `/fetch-probe-${mark(label)}`;
      const text = `${mark(label)} ${callMarker('web_fetch', { url: `http://127.0.0.1:${model.port}${path}` })}`;
      const answer = (await chat('research', text)).map((r) => toolResults(r.body)).join('\n');
      return { answer, arrived: model.requests.some((r) => r.path === path) };
    };
    const guarded = await fetchProbe('GUARDED');
    expect(guarded.arrived, guarded.answer).toBe(false);
    expect(guarded.answer).toContain('Blocked hostname or private/internal/special-use IP address');

    const opened = config() as { tools: Record<string, unknown> };
    opened.tools.web = { fetch: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } } };
    const reloads = count('config hot reload applied');
    writeFileSync(gateway.configPath, `${JSON.stringify(opened, null, 2)}\n`);
    await until(() => count('config hot reload applied') > reloads, 60_000, 'the hot reload', 200);
    const view = classifyAgentTools(config(), 'research');
    expect(view).toMatchObject({ class: 'host', tools: ['web_fetch', 'web_search'] });
    expect(view.detail).toContain('tools.web.fetch.ssrfPolicy.dangerouslyAllowPrivateNetwork');
    const open = await fetchProbe('OPEN');
    expect(open.arrived, open.answer).toBe(true);
    expect(open.answer).toContain('Web fetch failed (404)'); // the stand-in server's answer to an unknown path
  });

  it('none: the restricted agent beside it classifies none and is offered nothing', async () => {
    await mergeAndReload(restrictedAgentSnippet('quiet', rosterFacts(config())));
    await until(
      async () => (await listed()).includes('openclaw/quiet'),
      30_000,
      'openclaw/quiet listed',
      500,
    );
    expect(classifyAgentTools(config(), 'quiet')).toMatchObject({ class: 'none', tools: [] });
    const seen = offered((await chat('quiet', mark('QUIET')))[0]!);
    expect(seen.reachable).toEqual([]);
  });

  it('Sandboxed helper: the Docker variant validates, and the Podman one hot reloads as sandboxed', async () => {
    // The Docker variant (the default) against the same file, in a copy: validation does not need Docker.
    const dir = mkdtempSync(join(gateway.home, 'docker-variant-'));
    try {
      const copy = join(dir, 'openclaw.json');
      const docker = skillAgentSnippet('sandboxed', 'helper', rosterFacts(config()));
      writeFileSync(copy, JSON.stringify(mergeConfig(config(), JSON5.parse(docker))));
      const validated = await gateway.cli(['config', 'validate'], { OPENCLAW_CONFIG_PATH: copy });
      expect(validated.status, validated.out).toBe(0);
      expect(validated.out).not.toMatch(/warning/i);
      expect(classifyAgentTools(JSON5.parse(readFileSync(copy, 'utf8')), 'helper').class).toBe('sandboxed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const options: SkillSnippetOptions = { backend: 'podman' };
    await mergeAndReload(skillAgentSnippet('sandboxed', 'helper', rosterFacts(config()), options));
    await until(
      async () => (await listed()).includes('openclaw/helper'),
      30_000,
      'openclaw/helper listed',
      500,
    );
    expect(classifyAgentTools(config(), 'helper')).toMatchObject({
      class: 'sandboxed',
      tools: ['apply_patch', 'edit', 'exec', 'ls', 'process', 'read', 'write'],
      sandbox: { mode: 'all', workspaceAccess: 'none', network: 'none' },
    });
    // OpenClaw's own account of the agent's sandbox agrees, and of the sandbox tool policy's defaults that
    // the classifier applies (SANDBOX_DEFAULT_ALLOW/DENY, copied from its compiled constants).
    const explained = await gateway.cli(['sandbox', 'explain', '--agent', 'helper', '--json']);
    expect(explained.status, explained.out).toBe(0);
    const explain = JSON.parse(explained.out.slice(explained.out.indexOf('{'))) as {
      sandbox: Record<string, unknown> & { tools: { allow: string[]; deny: string[] } };
      elevated: { enabled: boolean };
    };
    expect(explain.sandbox).toMatchObject({
      mode: 'all',
      backend: 'podman',
      scope: 'agent',
      workspaceAccess: 'none',
      sessionIsSandboxed: true,
    });
    expect(explain.elevated.enabled).toBe(false);
    expect(explain.sandbox.tools.allow).toEqual(SANDBOX_DEFAULT_ALLOW);
    expect(explain.sandbox.tools.deny).toEqual(expect.arrayContaining([...SANDBOX_DEFAULT_DENY]));
  });

  it.skipIf(!runtime.ok)(
    `Sandboxed helper: offered the shell and file tools only, and its exec runs in the container, whatever the caller's directives${runtime.ok ? '' : ` (skipped: ${runtime.why})`}`,
    async () => {
      sandboxUsed = true;
      const command = [
        'echo "uid=$(id -u) user=$(id -un)"',
        'echo "net=$(ls /sys/class/net | tr "\\n" " ")"',
        `test -e ${gateway.configPath} && echo "sees=host-config" || echo "sees=no-host-config"`,
        'echo "pwd=$(pwd)"',
      ].join('; ');
      const text = `${mark('HELPER')} ${callMarker('exec', { command })}`;
      const requests = await chat('helper', text);
      const { beyondMeta } = offeredTools(requests);
      expect(beyondMeta).toEqual(classifyAgentTools(config(), 'helper').tools);

      // The model called exec; the result it got back is the container's, not this machine's.
      const result = requests.map((r) => toolResults(r.body)).join('\n');
      console.log(`exec in the sandbox answered: ${result}`);
      expect(result).toMatch(/uid=1000 user=sandbox/);
      expect(result).toMatch(/net=lo\s*$/m);
      expect(result).toContain('sees=no-host-config');
      const containers = await run('podman', ['ps', '--format', '{{.Names}}'], runtime.ok ? runtime.env : {});
      expect(containers.out).toMatch(/openclaw-sbx-/);

      // A caller's escape directives are text to the model on this endpoint, and exec stays in the container.
      const caller = mark('caller');
      await chat('helper', '/elevated full', caller);
      await chat('helper', '/exec host=gateway security=full ask=off', caller);
      const again = `${mark('HELPER-AFTER-DIRECTIVES')} ${callMarker('exec', { command })}`;
      const after = (await chat('helper', again, caller)).map((r) => toolResults(r.body)).join('\n');
      expect(after).toMatch(/uid=1000 user=sandbox/);
      expect(after).toContain('sees=no-host-config');
    },
  );

  it.skipIf(!runtime.ok)(
    "Sandboxed helper: the sandbox tool policy's defaults drop web_search and message, for the classifier and the gateway, until it lets web_search in",
    async () => {
      const edited = config() as { agents: { entries: Record<string, { tools: { allow: string[] } }> } };
      edited.agents.entries.helper!.tools.allow.push('web_search', 'message');
      const reloads = count('config hot reload applied');
      writeFileSync(gateway.configPath, `${JSON.stringify(edited, null, 2)}\n`);
      await until(() => count('config hot reload applied') > reloads, 60_000, 'the hot reload', 200);

      const view = classifyAgentTools(config(), 'helper');
      expect(view).toMatchObject({
        class: 'sandboxed',
        tools: ['apply_patch', 'edit', 'exec', 'ls', 'process', 'read', 'write'],
      });
      const { beyondMeta } = offeredTools(await chat('helper', mark('HELPER-POLICY')));
      expect(beyondMeta).toEqual(view.tools);

      // Let web_search into the sandbox: both now have it, and the class stays sandboxed (a web tool).
      const opened = config() as { agents: { entries: Record<string, { tools: Record<string, unknown> }> } };
      opened.agents.entries.helper!.tools.sandbox = { tools: { alsoAllow: ['web_search'] } };
      const before = count('config hot reload applied');
      writeFileSync(gateway.configPath, `${JSON.stringify(opened, null, 2)}\n`);
      await until(() => count('config hot reload applied') > before, 60_000, 'the hot reload', 200);
      const widened = classifyAgentTools(config(), 'helper');
      expect(widened).toMatchObject({ class: 'sandboxed' });
      expect(widened.tools).toEqual([...view.tools, 'web_search'].sort());
      expect(offeredTools(await chat('helper', mark('HELPER-WEB'))).beyondMeta).toEqual(widened.tools);
    },
  );

  it('an edit that gives Research exec: the classifier says host, and the gateway does offer exec', async () => {
    const edited = config() as { agents: { entries: Record<string, { tools: { allow: string[] } }> } };
    edited.agents.entries.research!.tools.allow.push('exec');
    const reloads = count('config hot reload applied');
    writeFileSync(gateway.configPath, `${JSON.stringify(edited, null, 2)}\n`);
    await until(() => count('config hot reload applied') > reloads, 60_000, 'the hot reload', 200);

    const view = classifyAgentTools(config(), 'research');
    expect(view).toMatchObject({ class: 'host', tools: ['exec', 'web_fetch', 'web_search'] });
    expect(view.detail).toContain('exec (runs commands on this machine)');
    const { direct } = offeredTools(await chat('research', mark('RESEARCH-EXEC')));
    expect(direct).toContain('exec');
  });
});

if (!available) {
  describe("real OpenClaw: the tool classes of skills' agents (not installed)", () => {
    it.skip('needs the pinned OpenClaw runtime: run `npm run test:openclaw`, which installs it first', () => {});
  });
}
