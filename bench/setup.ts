// The bench's world: the load generator and a peer agent in this process; the agent under test, the
// instant gateway, the plain echo server and the minimal A2A SDK server each in a child process of their own, as they would be deployed.
// Checks that a signed call really works before measuring.
import {
  publicKeyFromRaw,
  verifyParsedSignature,
  parseSignatureHeaders,
  digestMatches,
} from '../src/protocol/index.js';
import type { AgentCard } from '../src/protocol/index.js';
import { appFetch } from '../src/lib/http.js';
import { readFileSync } from 'node:fs';
import { KEY_FILE_NAME, parseKeyFile } from '../src/keys/key-file.js';
import { nodeEd25519, privateKeyFromRaw, type Signer } from '../src/protocol/index.js';
import { join } from 'node:path';
import { startAgent, type TestAgent } from '../test/helpers/agents.js';
import { spawnServer, type ServerChild, type SpawnOptions } from './child-host.js';
import { sendAndRead } from './load.js';
import { pinSelf, unpinSelf, type PinPlan } from './pinning.js';
import { a2aMessage, signedChat, type Caller } from './requests.js';

export interface GatewayRef {
  url: string;
  token: string;
}

const GATEWAY_TOKEN = 'bench-gateway-token';

export interface BenchEnv {
  /** The instant gateway (bench/instant-gateway.ts), in its own process. */
  gateway: GatewayRef & { child: ServerChild };
  /** The calling agent: a real AgentBridgeApp whose card the agent under test fetches once. */
  peer: TestAgent;
  caller: Caller;
  /** The agent under test, in its own process. */
  agent: ServerChild & { id: string; a2aKey: string };
  /** The SAMVAD anchor: a plain node:http JSON echo. */
  echo: ServerChild;
  /** The A2A anchor: the minimal server on the A2A SDK, on the same gateway. */
  sdkA2A: ServerChild;
  pin: PinPlan | undefined;
  close(): Promise<void>;
}

export interface SetupOptions {
  /** Write a CPU profile of the agent process into this directory when it stops. */
  cpuProfileDir?: string;
  /** Give the server under test a CPU of its own (see pinning.ts); pins this process too. */
  pin?: PinPlan;
}

export async function setupBench(options: SetupOptions = {}): Promise<BenchEnv> {
  const { pin } = options;
  if (pin) pinSelf(pin.client);
  const gatewayChild = await spawnServer({ role: 'gateway', token: GATEWAY_TOKEN }, { cpu: pin?.client });
  const gateway = { url: gatewayChild.url, token: GATEWAY_TOKEN, child: gatewayChild };
  const children: ServerChild[] = [gatewayChild];
  let peer: TestAgent | undefined;
  const close = async () => {
    await Promise.all(children.map((child) => child.stop()));
    await peer?.close();
    if (pin) unpinSelf();
  };
  try {
    peer = await startAgent({ settings: { gatewayUrl: gateway.url, gatewayToken: gateway.token } });
    const caller = benchCaller(peer);
    const agent = await startAgentChild(gateway, {
      cpuProfileDir: options.cpuProfileDir,
      cpu: pin?.server,
      approved: [peer.id],
    });
    children.push(agent);
    const echo = await spawnServer({ role: 'echo' }, { cpu: pin?.server });
    children.push(echo);
    const sdkA2A = await spawnServer(
      { role: 'sdk-a2a', gatewayUrl: gateway.url, gatewayToken: gateway.token },
      { cpu: pin?.server },
    );
    children.push(sdkA2A);
    await checkSignedChat(agent.url, caller, agent.id);
    await checkA2ASend(agent.url, agent.a2aKey);
    // The anchor must do the same work: a completed task holding the gateway's reply.
    await checkA2ASend(sdkA2A.url, agent.a2aKey);
    return { gateway, peer, caller, agent, echo, sdkA2A, pin, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The calling agent (the bench's peer) as the load generator signs for it: with its own key, through
 * node:crypto whatever Ed25519 library the agent uses. The load generator's cost per request is part of every
 * row (the echo ceiling is bound by it), so it must not change with the code under test; node:crypto is
 * what it signed with when the targets were set.
 */
export function benchCaller(peer: TestAgent): Caller {
  return { id: peer.id, signer: loadGeneratorSigner(peer.dataDir) };
}

function loadGeneratorSigner(dataDir: string): Signer {
  const { signingKey } = parseKeyFile(JSON.parse(readFileSync(join(dataDir, KEY_FILE_NAME), 'utf8')));
  const privateKey = privateKeyFromRaw(signingKey.privateKey);
  return {
    kid: signingKey.kid,
    sign: (data) =>
      nodeEd25519.sign(privateKey, typeof data === 'string' ? Buffer.from(data) : data).toString('base64'),
  };
}

/**
 * The node options `npm run serve` starts the core with (its script in package.json): the agent child runs
 * with them too, so that its memory and CPU are the headless agent's.
 */
export function serveNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const match = /\bnode((?: --[\w-]+(?:=\S+)?)*) dist\/core\/cli\.js serve\b/.exec(pkg.scripts.serve ?? '');
  if (!match)
    throw new Error('package.json: the serve script no longer runs `node [options] dist/core/cli.js serve`');
  return match[1]!.split(' ').filter(Boolean);
}

export async function startAgentChild(
  gateway: GatewayRef,
  options: SpawnOptions & { approved: string[]; tunnelHost?: string; console?: boolean; redisUrl?: string },
): Promise<ServerChild & { id: string; a2aKey: string }> {
  const { tunnelHost, console: withConsole, approved, redisUrl, ...spawn } = options;
  const child = await spawnServer(
    {
      role: 'agent',
      gatewayUrl: gateway.url,
      gatewayToken: gateway.token,
      approved,
      ...(tunnelHost ? { tunnelHost } : {}),
      ...(withConsole ? { console: true } : {}),
      ...(redisUrl ? { redisUrl } : {}),
    },
    { ...spawn, nodeFlags: [...serveNodeFlags(), ...(spawn.nodeFlags ?? [])] },
  );
  if (!child.id || !child.a2aKey) throw new Error('the agent child did not report its id and A2A key');
  return { ...child, id: child.id, a2aKey: child.a2aKey };
}

/**
 * One signed call end to end: 200, `status: "ok"`, the gateway's reply, and a response signature that
 * verifies with the agent's card key. A bench of refusals would measure nothing.
 */
export async function checkSignedChat(agentUrl: string, caller: Caller, agentId: string): Promise<void> {
  const reply = await sendAndRead(agentUrl, signedChat(caller, agentId, 'sync', 'check')());
  const text = reply.body.toString('utf8');
  const json = JSON.parse(text) as { status?: string; result?: { reply?: string } };
  if (reply.status !== 200 || json.status !== 'ok' || json.result?.reply !== 'echo: check') {
    throw new Error(`A signed chat call failed (HTTP ${reply.status}): ${text.slice(0, 300)}`);
  }
  // appFetch: a tunnel's public URL (`*.localhost`) resolves to loopback as in the app.
  const card = (await (await appFetch(`${agentUrl}/.well-known/agent.json`)).json()) as AgentCard;
  if (card.id !== agentId) throw new Error(`${agentUrl} serves the card of ${card.id}, not ${agentId}`);
  const parsed = parseSignatureHeaders(
    String(reply.headers['signature-input']),
    String(reply.headers.signature),
  );
  if (typeof parsed === 'string') throw new Error(`The agent's reply signature is malformed: ${parsed}`);
  const raw = card.publicKeys.find((k) => k.kid === parsed.kid)?.key;
  const key = raw === undefined ? null : publicKeyFromRaw(raw);
  const digest = String(reply.headers['content-digest']);
  const verified =
    key !== null &&
    digestMatches(digest, reply.body) &&
    verifyParsedSignature(parsed, { status: 200, headers: { 'content-digest': digest } }, key);
  if (!verified) throw new Error("The agent's reply signature does not verify with its card key");
}

/** One A2A blocking send end to end: a completed task holding the gateway's reply (JSON-RPC answers 200 either way). */
export async function checkA2ASend(agentUrl: string, key: string): Promise<void> {
  const reply = await sendAndRead(agentUrl, a2aMessage(key, 'SendMessage', 'check')());
  const text = reply.body.toString('utf8');
  const json = JSON.parse(text) as {
    result?: { task?: { status?: { state?: string }; artifacts?: { parts?: { text?: string }[] }[] } };
  };
  const task = json.result?.task;
  const replyText = task?.artifacts
    ?.flatMap((a) => a.parts ?? [])
    .map((p) => p.text ?? '')
    .join('');
  // A blocking send asks the gateway for the whole reply (nobody sees its pieces): the instant gateway's echo.
  if (reply.status !== 200 || task?.status?.state !== 'TASK_STATE_COMPLETED' || replyText !== 'echo: check') {
    throw new Error(`An A2A send failed (HTTP ${reply.status}): ${text.slice(0, 300)}`);
  }
}
