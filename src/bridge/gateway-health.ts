// Is the gateway up? Asks `GET /health` only: it needs no token and works with the chat endpoint off,
// and probing by calling chat would start a paid agent run (GATEWAY.md "Health").
import http from 'node:http';
import https from 'node:https';
import type { GatewayProblem } from './diagnosis.js';
import { diagnoseConnectionError, gatewayError } from './diagnosis.js';
import type { GatewayError } from './diagnosis.js';
import { agentFor, gatewayEndpoint } from './gateway-client.js';
import type { GatewayConfig } from './gateway-client.js';

export interface GatewayHealth {
  /** Something answered HTTP at the URL. */
  reachable: boolean;
  /** It answered like a live gateway. */
  live: boolean;
  problem?: GatewayProblem;
  diagnosis?: string;
  fix?: string;
}

const MAX_HEALTH_BYTES = 16 * 1024;

export async function probeGateway(config: GatewayConfig, timeoutMs = 3000): Promise<GatewayHealth> {
  let endpoint: URL;
  try {
    endpoint = gatewayEndpoint(config.url, '/health');
  } catch {
    return failed(
      false,
      gatewayError('not-configured', { detail: 'the gateway URL is not a valid http(s) URL' }),
    );
  }
  const url = config.url;
  const answer = await gatewayGet(endpoint, timeoutMs).catch((error: unknown) => error as Error);
  if (answer === 'timeout')
    return failed(false, gatewayError('timeout', { url, timeoutMs, detail: 'GET /health' }));
  if (answer instanceof Error) return failed(false, diagnoseConnectionError(answer, url));
  if (answer.status === 200 && isLive(answer.body)) return { reachable: true, live: true };
  if (answer.status >= 500) {
    return failed(
      true,
      gatewayError('gateway-error', { url, httpStatus: answer.status, detail: 'GET /health' }),
    );
  }
  // Servers other than OpenClaw may have no /health at all; then chat is the only proof, and we never probe it.
  const detail = `GET /health answered HTTP ${answer.status} without {"ok":true}; servers other than OpenClaw may lack it`;
  return failed(true, gatewayError('not-chat-server', { url, detail }));
}

function failed(reachable: boolean, error: GatewayError): GatewayHealth {
  return { reachable, live: false, problem: error.problem, diagnosis: error.diagnosis, fix: error.fix };
}

function isLive(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { ok?: unknown; status?: unknown };
    return parsed.ok === true || parsed.status === 'live';
  } catch {
    return false;
  }
}

/**
 * One GET to the gateway with a deadline for the whole exchange and a bounded body; resolves 'timeout'
 * rather than throwing for it.
 */
export function gatewayGet(
  endpoint: URL,
  timeoutMs: number,
  headers: Record<string, string> = {},
  maxBytes = MAX_HEALTH_BYTES,
): Promise<{ status: number; body: string; contentType: string } | 'timeout'> {
  return new Promise((resolve, reject) => {
    const req = (endpoint.protocol === 'https:' ? https : http).get(endpoint, {
      agent: agentFor(endpoint),
      headers: { Accept: 'application/json', ...headers },
    });
    const timer = setTimeout(() => {
      resolve('timeout');
      req.destroy();
    }, timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    req.on('error', fail);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= maxBytes) chunks.push(chunk); // never buffer without bound
      });
      res.on('error', fail); // the connection closed mid-body
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          contentType: String(res.headers['content-type'] ?? ''),
        });
      });
    });
  });
}
