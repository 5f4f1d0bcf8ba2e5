/**
 * The typed client of the operator console API (src/protocol/console-api.ts). Every call carries the
 * console token as `Authorization: Bearer`; every failure becomes an ApiRequestError that says what
 * happened and what to do.
 */
import type {
  A2AKeyIssueRequest,
  A2AKeyIssueResponse,
  A2AKeyRevokeResponse,
  A2AKeysResponse,
  AccessChangeResponse,
  AccessResponse,
  ApiError,
  ConsoleTokenResponse,
  GatewayCheckResponse,
  KnockApproveRequest,
  KnockApproveResponse,
  KnocksResponse,
  McpResponse,
  OutboundCredentialRequest,
  OutboundCredentialsResponse,
  OutboundBudgetView,
  SelfTestResponse,
  SettingsResponse,
  SettingsUpdateResponse,
  SkillAddRequest,
  SkillEditRequest,
  SkillSnippetRequest,
  SkillSnippetResponse,
  SkillsResponse,
  StatusResponse,
  TrafficFilter,
  TrafficResponse,
} from './contract';

export interface FieldError {
  field: string;
  message: string;
}

export class ApiRequestError extends Error {
  constructor(
    /** The HTTP status; 0 when the console could not be reached at all. */
    readonly status: number,
    message: string,
    readonly fix?: string,
    readonly fields: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }

  get unauthorized(): boolean {
    return this.status === 401;
  }
}

export interface ApiClientOptions {
  token: string;
  /** Where the console is; '' (the page's own origin) in production. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Called on every 401: the token is wrong or belongs to an earlier launch. */
  onUnauthorized?: (error: ApiRequestError) => void;
}

export interface ExportedFile {
  blob: Blob;
  filename: string;
}

const UNREACHABLE_FIX =
  'Check that the agent is still running (`npm run serve` or the desktop app), then retry.';

export function createApiClient(options: ApiClientOptions) {
  const baseUrl = options.baseUrl ?? '';
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  async function send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { Authorization: `Bearer ${options.token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await doFetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
      });
    } catch {
      throw new ApiRequestError(0, 'Cannot reach the operator console.', UNREACHABLE_FIX);
    }
    if (!response.ok) {
      const error = await toError(response);
      if (error.unauthorized) options.onUnauthorized?.(error);
      throw error;
    }
    return response;
  }

  async function json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await send(method, path, body);
    const text = await response.text();
    if (!text) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiRequestError(response.status, `The console sent an unreadable answer to ${path}.`);
    }
  }

  return {
    status: () => json<StatusResponse>('GET', '/api/status'),
    traffic: (filter: TrafficFilter & { limit?: number } = {}) =>
      json<TrafficResponse>('GET', `/api/traffic${query(filter)}`),
    async exportTraffic(filter: TrafficFilter = {}): Promise<ExportedFile> {
      const response = await send('GET', `/api/traffic/export${query(filter)}`);
      const blob = await response.blob();
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      return {
        blob,
        filename:
          filenameFrom(response.headers.get('Content-Disposition')) ?? `agent-bridge-traffic-${stamp}.jsonl`,
      };
    },
    rotateKey: () => json<unknown>('POST', '/api/keys/rotate', {}),
    revokeKey: (kid: string) => json<unknown>('POST', `/api/keys/${encodeURIComponent(kid)}/revoke`, {}),
    register: () => json<unknown>('POST', '/api/registry/register', {}),
    startTunnel: () => json<unknown>('POST', '/api/tunnel/start', {}),
    stopTunnel: () => json<unknown>('POST', '/api/tunnel/stop', {}),
    /** The operator has seen that the public address (the agent's id) changed. */
    dismissAddressChange: () => json<unknown>('POST', '/api/tunnel/address-change/dismiss', {}),
    /** Sets the command tunnel to a stable-address preset, its fields filled in. */
    applyTunnelPreset: (id: string, values: Record<string, string>) =>
      json<SettingsUpdateResponse>('POST', '/api/tunnel/preset', { id, values }),
    settings: () => json<SettingsResponse>('GET', '/api/settings'),
    updateSettings: (changes: Record<string, unknown>) =>
      json<SettingsUpdateResponse>('PUT', '/api/settings', changes),
    selfTest: () => json<SelfTestResponse>('POST', '/api/selftest', {}),
    access: () => json<AccessResponse>('GET', '/api/access'),
    /**
     * Approves a waiting sender (its held tasks start), or any agent id ahead of its first call; `skills`:
     * exactly those (none: every public and approved skill). Approving again changes only the skills.
     */
    approveSender: (sender: string, skills?: string[]) =>
      json<AccessChangeResponse>('POST', '/api/access/approve', { sender, ...(skills ? { skills } : {}) }),
    /** Turns a waiting sender down: its held tasks fail; it is refused until its request would have expired. */
    denySender: (sender: string) => json<AccessChangeResponse>('POST', '/api/access/deny', { sender }),
    revokeSender: (sender: string) => json<AccessChangeResponse>('POST', '/api/access/revoke', { sender }),
    /** Probes the gateway now (health, agent list, tool policy): "Check again". */
    checkGatewayAgent: () => json<GatewayCheckResponse>('POST', '/api/gateway/check', {}),
    /** Lets callers reach an agent that exposes host tools: exactly this agent with exactly these tools. */
    acceptGatewayAgent: (agent: string, tools: string[]) =>
      json<GatewayCheckResponse>('POST', '/api/gateway/accept', { agent, tools }),
    /** Takes that back: callers are refused again. */
    withdrawGatewayAgent: () => json<GatewayCheckResponse>('POST', '/api/gateway/withdraw', {}),
    /** Credentials kept for A2A agents the operator's agent calls: their URLs and kinds, never their values. */
    credentials: () => json<OutboundCredentialsResponse>('GET', '/api/outbound/credentials'),
    /** Keeps one (replacing the one for that URL); the value is never sent back. */
    keepCredential: (credential: OutboundCredentialRequest) =>
      json<OutboundCredentialsResponse>('POST', '/api/outbound/credentials', credential),
    removeCredential: (url: string) =>
      json<OutboundCredentialsResponse>('POST', '/api/outbound/credentials/remove', { url }),
    /** Today's calls and tokens to each agent the operator's agent called, and the budgets per agent. */
    outboundBudgets: () => json<OutboundBudgetView>('GET', '/api/outbound/budgets'),
    /** The A2A keys (never a key itself), and the per-sender limits a key without its own gets. */
    a2aKeys: () => json<A2AKeysResponse>('GET', '/api/a2a/keys'),
    /** A new A2A key: the answer holds the key itself, the only time it is ever shown. */
    issueA2AKey: (request: A2AKeyIssueRequest) => json<A2AKeyIssueResponse>('POST', '/api/a2a/keys', request),
    /** Refuses the key from the next request on, at every replica within a second. */
    revokeA2AKey: (id: string) =>
      json<A2AKeyRevokeResponse>('POST', `/api/a2a/keys/${encodeURIComponent(id)}/revoke`, {}),
    /** The skills published (chat first), each with its agent, tools, audience, use today and card. */
    skills: () => json<SkillsResponse>('GET', '/api/skills'),
    addSkill: (request: SkillAddRequest) => json<SkillsResponse>('POST', '/api/skills', request),
    /** The fields sent change; `{paused: true}` pauses it. */
    editSkill: (id: string, changes: SkillEditRequest) =>
      json<SkillsResponse>('PUT', `/api/skills/${encodeURIComponent(id)}`, changes),
    removeSkill: (id: string) => json<SkillsResponse>('DELETE', `/api/skills/${encodeURIComponent(id)}`),
    /** A host skill served to its named callers with exactly these tools (asked again when they change). */
    acceptSkill: (id: string, tools: string[]) =>
      json<SkillsResponse>('POST', `/api/skills/${encodeURIComponent(id)}/accept`, { tools }),
    /** A new skill's agent config from a template, and that agent as it is now ("Check again"). */
    proposeSkillConfig: (request: SkillSnippetRequest) =>
      json<SkillSnippetResponse>('POST', '/api/skills/snippet', request),
    /** A2A callers without a key that knocked (policy pairing), the skills a key can open, the bounds. */
    knocks: () => json<KnocksResponse>('GET', '/api/a2a/knocks'),
    /** Issues a key for the knock's caller (it reads the key once, in its task) and runs its message. */
    approveKnock: (code: string, request: KnockApproveRequest) =>
      json<KnockApproveResponse>('POST', `/api/a2a/knocks/${encodeURIComponent(code)}/approve`, request),
    /** Ends the knock's task rejected with the reason (the caller reads it). */
    denyKnock: (code: string, reason: string) =>
      json<KnocksResponse>('POST', `/api/a2a/knocks/${encodeURIComponent(code)}/deny`, { reason }),
    /** The MCP server's URL, its token and the exact `openclaw mcp` commands (the token: only on request). */
    mcp: () => json<McpResponse>('GET', '/api/mcp'),
    /** A new MCP token: the old one stops working at once, so the gateway's config needs the new one. */
    regenerateMcpToken: () => json<McpResponse>('POST', '/api/mcp/token', {}),
    /** A new console token: every other tab and earlier link is refused from now on; this one takes it. */
    newConsoleToken: () => json<ConsoleTokenResponse>('POST', '/api/console/token', {}),
    /** The event stream's URL: EventSource cannot send headers, so the token rides in the query. */
    eventsUrl: () => `${baseUrl}/api/events?token=${encodeURIComponent(options.token)}`,
  };
}

/** Derived from the implementation, never kept by hand. */
export type ApiClient = ReturnType<typeof createApiClient>;

function query(params: TrafficFilter & { limit?: number }): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params) as [string, string | number | undefined][]) {
    if (value !== undefined && String(value).trim() !== '') search.set(name, String(value).trim());
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function toError(response: Response): Promise<ApiRequestError> {
  let body: Partial<ApiError> | undefined;
  try {
    body = (await response.json()) as Partial<ApiError>;
  } catch {
    body = undefined;
  }
  const error = body?.error;
  if (response.status === 401) {
    return new ApiRequestError(
      401,
      error?.message ?? 'The console refused the token.',
      error?.fix ??
        'Open the console URL that `npm run serve` printed, or paste the token from console.json.',
    );
  }
  return new ApiRequestError(
    response.status,
    error?.message ?? `The console answered ${response.status} ${response.statusText}`.trim(),
    error?.fix,
    error?.fields ?? [],
  );
}

function filenameFrom(disposition: string | null): string | null {
  const match = disposition ? /filename="?([^";]+)"?/i.exec(disposition) : null;
  return match?.[1] ?? null;
}
