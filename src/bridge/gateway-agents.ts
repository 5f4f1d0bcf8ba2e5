// Does the agent callers reach exist on the gateway? OpenClaw lists its agent targets at `GET /v1/models`
// (same auth as chat): `openclaw`, `openclaw/default` and `openclaw/<id>` for each configured agent.
import { diagnoseResponse, gatewayError, type GatewayProblem } from './diagnosis.js';
import { gatewayEndpoint, type GatewayConfig } from './gateway-client.js';
import { gatewayGet } from './gateway-health.js';
import { diagnoseConnectionError } from './diagnosis.js';

export type AgentListing =
  | { ok: true; agents: string[] }
  | { ok: false; detail: string; problem: GatewayProblem; diagnosis?: string; fix?: string };

const MODEL_PREFIX = 'openclaw/';
const MAX_MODELS_BYTES = 256 * 1024;

/** The agent ids the gateway offers as `openclaw/<id>` models, or why they could not be listed. */
export async function listGatewayAgents(config: GatewayConfig, timeoutMs = 3000): Promise<AgentListing> {
  let endpoint: URL;
  try {
    endpoint = gatewayEndpoint(config.url, '/v1/models');
  } catch {
    return { ok: false, problem: 'not-configured', detail: 'the gateway URL is not a valid http(s) URL' };
  }
  // Without a token the call would count as a failed login towards the gateway's lockout.
  if (!config.token) return { ok: false, problem: 'not-configured', detail: 'no gateway token is set' };
  const answer = await gatewayGet(
    endpoint,
    timeoutMs,
    { Authorization: `Bearer ${config.token}` },
    MAX_MODELS_BYTES,
  ).catch((error: unknown) => error as Error);
  if (answer === 'timeout') {
    const error = gatewayError('timeout', { url: config.url, timeoutMs, detail: 'GET /v1/models' });
    return failed(error, 'GET /v1/models did not answer in time');
  }
  if (answer instanceof Error) {
    return failed(diagnoseConnectionError(answer, config.url), 'the gateway is not reachable');
  }
  if (answer.status !== 200) {
    const error = diagnoseResponse(
      { status: answer.status, contentType: answer.contentType, body: redact(answer.body, config.token) },
      config.url,
    );
    return failed(error, `GET /v1/models answered HTTP ${answer.status}`);
  }
  const ids = modelIds(answer.body);
  if (!ids) return { ok: false, problem: 'not-chat-server', detail: 'GET /v1/models did not list models' };
  const agents = ids.filter((id) => id.startsWith(MODEL_PREFIX)).map((id) => id.slice(MODEL_PREFIX.length));
  return { ok: true, agents: [...new Set(agents)].sort() };
}

function failed(error: ReturnType<typeof gatewayError>, detail: string): AgentListing {
  return { ok: false, problem: error.problem, detail, diagnosis: error.diagnosis, fix: error.fix };
}

// OpenAI's list shape: {"object": "list", "data": [{"id": "..."}]}.
function modelIds(body: string): string[] | undefined {
  try {
    const data = (JSON.parse(body) as { data?: unknown }).data;
    if (!Array.isArray(data)) return undefined;
    return data
      .map((entry) => (entry as { id?: unknown } | null)?.id)
      .filter((id): id is string => typeof id === 'string');
  } catch {
    return undefined;
  }
}

function redact(text: string, token: string): string {
  return token ? text.split(token).join('[redacted]') : text;
}
