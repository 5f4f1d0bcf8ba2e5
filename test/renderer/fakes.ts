/**
 * Doubles for the renderer's component tests: a scripted fetch and EventSource. These tests check the UI's
 * logic only; the real console server is covered by its API tests and the Playwright suite.
 */
import { vi } from 'vitest';
import type { EventSourceLike } from '../../renderer/src/api/events';
import type { ConsoleData } from '../../renderer/src/hooks/useConsole';
import { initialTrafficLog } from '../../renderer/src/traffic/log';
import { presetViews } from '../../src/tunnel/presets.js';
import type {
  AccessResponse,
  ApprovedSenderView,
  GatewayAgentView,
  PendingSenderView,
  SettingsResponse,
  SettingsUpdateResponse,
  SkillsResponse,
  SkillView,
  StatusResponse,
  TrafficEntry,
} from '../../src/protocol/console-api.js';
import type { SkillSetting } from '../../src/protocol/skills.js';

export class FakeEventSource implements EventSourceLike {
  static instances: FakeEventSource[] = [];
  onopen: ((event: Event) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  closed = false;
  private listeners = new Map<string, ((event: MessageEvent<string>) => void)[]>();

  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }

  static create = (url: string): FakeEventSource => new FakeEventSource(url);

  static get last(): FakeEventSource {
    const last = FakeEventSource.instances[FakeEventSource.instances.length - 1];
    if (!last) throw new Error('no EventSource was opened');
    return last;
  }

  addEventListener(type: string, listener: (event: MessageEvent<string>) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  close(): void {
    this.closed = true;
  }

  open(): void {
    this.onopen?.(new Event('open'));
  }

  fail(): void {
    this.onerror?.(new Event('error'));
  }

  emit(type: string, data: unknown): void {
    const event = new MessageEvent<string>(type, { data: JSON.stringify(data) });
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
}

export interface Reply {
  status?: number;
  body?: unknown;
}

export type Route = (request: {
  method: string;
  path: string;
  body: unknown;
  headers: Headers;
}) => Reply | undefined;

/** A fetch double answering `METHOD /path` routes; every call is recorded. */
export function fakeFetch(routes: Record<string, Reply | Route>) {
  const calls: { method: string; path: string; body: unknown; headers: Headers }[] = [];
  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input), 'http://127.0.0.1:8788');
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    const headers = new Headers(init?.headers);
    const call = { method, path: url.pathname, body, headers };
    calls.push(call);
    const route = routes[`${method} ${url.pathname}`];
    const reply = typeof route === 'function' ? route(call) : route;
    if (!reply) return new Response(JSON.stringify({ error: { message: 'no route' } }), { status: 404 });
    return new Response(reply.body === undefined ? '' : JSON.stringify(reply.body), {
      status: reply.status ?? 200,
      headers: { 'Content-Type': 'application/json' },
    });
  });
  return { fetch, calls };
}

export function entry(id: number, overrides: Partial<TrafficEntry> = {}): TrafficEntry {
  return {
    id,
    // One second apart, in the order of their ids (the log lists them newest first by start time).
    time: new Date(Date.UTC(2025, 0, 1, 12, 0, 0) + id * 1000).toISOString(),
    endpoint: '/agent/message',
    sender: 'agent://a.example',
    skill: 'chat',
    mode: 'sync',
    signatureForm: 'headers',
    verdict: 'accepted',
    status: 200,
    durationMs: 120,
    bytesIn: 500,
    bytesOut: 900,
    traceId: `trace-${id}`,
    ...overrides,
  };
}

export function status(overrides: Partial<StatusResponse> = {}): StatusResponse {
  return {
    agent: {
      id: 'agent://demo.example',
      url: 'https://demo.example',
      localUrl: 'http://127.0.0.1:8787',
      version: '0.1.0',
      protocolVersion: '1.2',
      uptimeSeconds: 90,
      health: 'ok',
      activeRequests: 0,
      queuedTasks: 0,
      card: {
        id: 'agent://demo.example',
        name: 'Demo agent',
        version: '0.1.0',
        description: 'A demo',
        url: 'https://demo.example',
        protocolVersion: '1.2',
        specializations: [],
        models: [],
        skills: [],
        publicKeys: [],
        auth: { schemes: ['none'] },
        rateLimit: { requestsPerMinute: 60, requestsPerSender: 10, tokensPerSenderPerDay: 1000 },
        cardTTL: 300,
        endpoints: {
          intro: '/agent/intro',
          message: '/agent/message',
          task: '/agent/task',
          taskStatus: '/agent/task/:taskId',
          stream: '/agent/stream',
          health: '/agent/health',
        },
      },
    },
    gateway: {
      status: 'configured',
      condition: 'up',
      since: '2025-01-01T11:00:00Z',
      url: 'http://127.0.0.1:18789',
      model: 'openclaw/public',
      live: true,
      agent: gatewayAgent(),
    },
    tunnel: {
      provider: 'localtunnel',
      status: 'online',
      url: 'https://demo.example',
      since: '2025-01-01T00:00:00Z',
    },
    registry: { status: 'unregistered' },
    keys: [],
    traffic: { perMinute: [], accepted: 0, refused: 0 },
    restartNeeded: [],
    access: { policy: 'pairing', pending: 0 },
    mcp: {
      url: 'http://127.0.0.1:8788/mcp',
      listedInGatewayConfig: true,
      outbound: 'any',
      toolGlob: 'agent-bridge__*',
      policySnippet: '{ agents: { entries: { public: { tools: { deny: ["agent-bridge__*"] } } } } }',
    },
    state: { backend: 'data-dir', up: true },
    a2a: { cardUrl: 'https://demo.example/.well-known/agent-card.json', keys: 2 },
    skills: { published: 1, public: 1, notServing: 0 },
    ...overrides,
  };
}

export const SNIPPET =
  '{\n  agents: {\n    entries: {\n      main: {},\n      public: { tools: { profile: "minimal" } },\n    },\n  },\n}';

/** The gateway's target agent: present and restricted unless told otherwise. */
export function gatewayAgent(overrides: Partial<GatewayAgentView> = {}): GatewayAgentView {
  return {
    id: 'public',
    model: 'openclaw/public',
    check: 'present',
    checkedAt: '2025-01-01T12:00:00Z',
    available: ['main', 'public'],
    tools: { verdict: 'restricted', detail: 'profile "minimal"; host tools denied' },
    snippet: SNIPPET,
    ...overrides,
  };
}

/** A sender waiting for approval, first seen ten minutes before `now`. */
export function pendingSender(
  sender: string,
  overrides: Partial<PendingSenderView> = {},
  now = Date.now(),
): PendingSenderView {
  return {
    sender,
    code: 'K7Q-4PX',
    firstAt: new Date(now - 10 * 60_000).toISOString(),
    lastAt: new Date(now - 2 * 60_000).toISOString(),
    count: 3,
    heldTasks: 1,
    expiresAt: new Date(now + 23 * 3600_000).toISOString(),
    ...overrides,
  };
}

export function approvedSender(
  sender: string,
  overrides: Partial<ApprovedSenderView> = {},
): ApprovedSenderView {
  return { sender, source: 'operator', approvedAt: '2025-01-01T09:00:00Z', ...overrides };
}

/** GET /api/access */
export function accessView(overrides: Partial<AccessResponse> = {}): AccessResponse {
  return {
    policy: 'pairing',
    pending: [],
    approved: [],
    limits: { maxPending: 100, maxHeldPerSender: 3, expiryHours: 24 },
    refusedWhileFull: 0,
    ...overrides,
  };
}

/** What the console refuses to change (a command the agent runs), as `GET /api/settings` lists it. */
export const READ_ONLY_SETTINGS = ['tunnelCommand', 'tunnelUrlPattern'];

/**
 * GET /api/settings around `settings`: each saved in settings.json, the gateway token set, two bearer tokens,
 * the tunnel command read-only.
 */
export function settingsView(
  settings: Record<string, unknown>,
  overrides: Partial<SettingsResponse> = {},
): SettingsResponse {
  return {
    settings,
    sources: Object.fromEntries(Object.keys(settings).map((name) => [name, { source: 'settings' }])),
    secrets: { gatewayToken: { set: true }, bearerTokens: { count: 2 } },
    restartNeeded: [],
    readOnly: [...READ_ONLY_SETTINGS],
    tunnelPresets: presetViews(),
    ...overrides,
  };
}

/** PUT /api/settings: the view after the change, and what applied at once. */
export function settingsSaved(
  view: SettingsResponse,
  applied: string[],
  overrides: Partial<SettingsUpdateResponse> = {},
): SettingsUpdateResponse {
  return { ...view, applied, ...overrides };
}

/** What `useConsole` gives the pages, around a fixed status. */
export function consoleData(value: StatusResponse | null, overrides: Partial<ConsoleData> = {}): ConsoleData {
  return {
    status: value,
    statusError: null,
    refreshStatus: vi.fn(async () => undefined),
    connection: { status: 'live', since: 0 },
    traffic: initialTrafficLog,
    trafficError: null,
    pause: vi.fn(),
    resume: vi.fn(),
    accessVersion: 0,
    skillsVersion: 0,
    ...overrides,
  };
}

/** One skill as GET /api/skills lists it: published to approved callers on an agent of its own, serving. */
export type SkillViewOverrides = Omit<Partial<SkillView>, 'setting'> & { setting?: Partial<SkillSetting> };

export function skillView(id: string, overrides: SkillViewOverrides = {}): SkillView {
  const setting: SkillSetting = {
    id,
    name: id[0]!.toUpperCase() + id.slice(1),
    description: `The ${id} skill.`,
    examples: [],
    agent: id,
    audience: 'approved',
    limits: {},
    paused: false,
    ...overrides.setting,
  };
  return {
    builtIn: false,
    agent: {
      agent: setting.agent,
      model: `openclaw/${setting.agent}`,
      check: 'present',
      checkedAt: '2025-01-01T12:00:00Z',
      available: [...new Set(['main', 'public', setting.agent])],
    },
    tools: { class: 'none', tools: [], detail: `Agent ${setting.agent} is offered no tools.` },
    widest: 'sandboxed',
    serving: { serving: true },
    limits: { requestsPerMinute: 10, tokensPerDay: 100_000 },
    today: { calls: 0, tokens: 0 },
    a2aCardUrl: `https://demo.example/a2a/skills/${id}/.well-known/agent-card.json`,
    ...overrides,
    setting,
  };
}

/** The built-in chat skill, on the restricted agent. */
export function chatSkillView(overrides: SkillViewOverrides = {}): SkillView {
  return skillView('chat', {
    builtIn: true,
    widest: 'web',
    a2aCardUrl: 'https://demo.example/.well-known/agent-card.json',
    ...overrides,
    setting: {
      id: 'chat',
      name: 'Chat',
      description: "Send a message to the operator's agent.",
      examples: [],
      agent: 'public',
      audience: 'public',
      limits: {},
      paused: false,
      ...overrides.setting,
    },
  });
}

/** GET /api/skills: chat first, then `skills`. */
export function skillsView(skills: SkillView[] = []): SkillsResponse {
  return {
    skills: [chatSkillView(), ...skills],
    defaults: { requestsPerMinute: 10, tokensPerDay: 100_000 },
  };
}
