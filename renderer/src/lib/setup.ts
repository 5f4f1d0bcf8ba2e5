/** The first-run walk-through: what is left to do before the agent is public and listed, in order. */
import type { StatusResponse } from '../api/contract';
import { isLoopbackHost, isPublicHttpsUrl } from './address';
import { registryFix } from './registry-advice';

export interface SetupStep {
  id: 'gateway' | 'tunnel' | 'registry' | 'mcp';
  title: string;
  done: boolean;
  /** What to do next (or what is happening), when not done. */
  next?: string;
  /** Not done, but not something the guide waits for (the bridge cannot check it). */
  optional?: boolean;
  /** The step's next action is a command the Overview shows (with its copy button). */
  command?: 'mcp-add' | 'mcp-update';
  /** No gateway on this machine: the Overview offers OpenClaw's install page and a remote gateway's form. */
  offer?: 'remote-gateway';
}

export function setupSteps(status: StatusResponse): SetupStep[] {
  if (status.demo) return demoSteps(status);
  return [
    gatewayStep(status.gateway),
    tunnelStep(status.tunnel, status.agent.url),
    registryStep(status.registry, status.tunnel),
    mcpStep(status.mcp),
  ];
}

/**
 * A demo run (`serve --demo`) stays on this machine, with a stand-in gateway: there is nothing to publish or
 * list, and asking for it would send a newcomer off to register a stand-in. What is left is the real thing.
 */
function demoSteps(status: StatusResponse): SetupStep[] {
  const later = 'Not in the demo: run the bridge without --demo, next to your own OpenClaw gateway.';
  return [
    {
      id: 'gateway',
      title: 'Connect your gateway',
      done: false,
      optional: true,
      next: `The demo's stand-in gateway answers every call, and says so. ${later}`,
    },
    {
      id: 'tunnel',
      title: 'Call the demo agent',
      done: false,
      optional: true,
      next: `From a shell on this machine: npx agent-bridge call --demo ${status.agent.id} "Hello", then see the call in Traffic.`,
    },
    {
      id: 'registry',
      title: 'Get a public address and list the agent',
      done: false,
      optional: true,
      next: later,
    },
    { ...mcpStep(status.mcp), optional: true },
  ];
}

/** Whether the guide has nothing left to show: every step done, or optional. */
export function setupComplete(steps: SetupStep[]): boolean {
  return steps.every((step) => step.done || step.optional === true);
}

/** The operator's own agent calls out through the bridge's MCP server, once the gateway lists it. */
function mcpStep(mcp: StatusResponse['mcp']): SetupStep {
  const title = 'Let your agent call other agents';
  if (mcp.outbound === 'off') return { id: 'mcp', title, done: true };
  if (mcp.movedFrom) {
    return {
      id: 'mcp',
      title,
      done: false,
      command: 'mcp-update',
      next: `The MCP server moved to ${mcp.url} (port ${new URL(mcp.movedFrom).port} was busy). Free that port and restart the bridge, or update the gateway:`,
    };
  }
  if (mcp.gatewayConfigProblem) {
    return { id: 'mcp', title, done: false, command: 'mcp-update', next: `${mcp.gatewayConfigProblem} Run:` };
  }
  if (mcp.listedInGatewayConfig === true) return { id: 'mcp', title, done: true };
  const next =
    "Add the bridge's MCP server to your gateway, where the gateway runs: your agent can then look up and call other agents with this agent's identity, every reply verified and every call in Traffic.";
  // A remote gateway, or a config the bridge cannot read: it cannot tell, so the guide does not wait.
  if (mcp.listedInGatewayConfig === undefined) {
    return { id: 'mcp', title, done: false, optional: true, command: 'mcp-add', next };
  }
  return { id: 'mcp', title, done: false, command: 'mcp-add', next };
}

function gatewayStep(gateway: StatusResponse['gateway']): SetupStep {
  const title = 'Connect your gateway';
  const offer = noGatewayHere(gateway) ? { offer: 'remote-gateway' as const } : {};
  const todo = (next: string): SetupStep => ({ id: 'gateway', title, done: false, next, ...offer });
  switch (gateway.condition) {
    case 'not-configured':
      return todo(
        `The gateway is ${gateway.status.replace('missing', 'missing its')}: set its URL and token in Settings → Gateway. Next to OpenClaw, both are read from ~/.openclaw/openclaw.json.`,
      );
    case 'unknown':
      return todo('Checking the gateway…');
    case 'down':
    case 'token-wrong':
    case 'failing':
      return todo(
        gateway.problem
          ? `${gateway.problem.diagnosis} ${gateway.problem.fix}`
          : 'The gateway does not answer: start it and check its URL.',
      );
    case 'agent-missing':
    case 'up':
      return agentStep(gateway.agent, title);
  }
}

/**
 * No OpenClaw gateway on this machine: none was found (no address and token in the settings, the
 * environment or ~/.openclaw/openclaw.json), or nothing answers at the loopback address the bridge uses.
 */
function noGatewayHere(gateway: StatusResponse['gateway']): boolean {
  if (gateway.condition === 'not-configured') return true;
  return gateway.condition === 'down' && isLoopbackUrl(gateway.url);
}

function isLoopbackUrl(url: string): boolean {
  try {
    return isLoopbackHost(new URL(url).host);
  } catch {
    return false;
  }
}

/** OpenClaw's installation guide (its README's "Install" section points there) and its remote-access page. */
export const OPENCLAW_INSTALL_URL = 'https://docs.openclaw.ai/install';
export const OPENCLAW_REMOTE_URL = 'https://docs.openclaw.ai/gateway/remote';

/**
 * What is wrong with a remote gateway's address and token as typed, before they are sent (the console checks
 * again); undefined when they may be saved.
 */
export function remoteGatewayProblem(url: string, token: string): string | undefined {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url.trim());
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '')
    return "The address must be the gateway's http:// or https:// URL, like https://gateway.example.com or http://100.101.102.103:18789.";
  if (token.trim() === '')
    return "Enter the gateway's token (gateway.auth.token in that machine's ~/.openclaw/openclaw.json): it is sent to this address only.";
  return undefined;
}

/** The gateway answers; the agent callers reach must exist and must not hand them this machine unasked. */
function agentStep(agent: StatusResponse['gateway']['agent'], title: string): SetupStep {
  const name = `"${agent.id ?? agent.model}"`;
  const todo = (next: string): SetupStep => ({ id: 'gateway', title, done: false, next });
  if (agent.check === 'checking') return todo(`Checking that the gateway has the agent ${name} for callers…`);
  if (agent.check === 'missing') {
    return todo(
      `The gateway has no agent ${name} for callers, so nothing is forwarded. Add the restricted agent shown in the Gateway card to ~/.openclaw/openclaw.json (OpenClaw applies it without a restart), then press Check again (or choose another agent in Settings → Gateway).`,
    );
  }
  if (agent.tools.verdict === 'unknown' && agent.tools.notLoaded) {
    return todo(
      `Callers are refused: OpenClaw has not loaded its config file (${agent.tools.notLoaded}). Run \`openclaw config validate\` where the gateway runs, fix what it reports, then press Check again.`,
    );
  }
  if (agent.tools.verdict === 'exposes-host-tools' && agent.acceptance?.state !== 'accepted') {
    return todo(
      `Callers are refused: agent ${name} can use ${agent.tools.tools.join(', ')}, so anyone you let in could run commands or read and change files on this machine. Give callers a restricted agent with the snippet in the Gateway card (or choose one in Settings → Gateway), then press Check again; or, if you mean it, accept this agent with these tools there.`,
    );
  }
  return { id: 'gateway', title, done: true };
}

function tunnelStep(tunnel: StatusResponse['tunnel'], agentUrl: string): SetupStep {
  const title = 'Get a public address';
  switch (tunnel.status) {
    case 'online':
      // Connected is not reachable: the step is done when a call through the address found this agent.
      if (tunnel.reachability?.state === 'unreachable') {
        const problem = tunnel.reachability.problem ?? 'the last call through it failed';
        return {
          id: 'tunnel',
          title,
          done: false,
          next: `The address does not reach this agent: ${problem}.`,
        };
      }
      return { id: 'tunnel', title, done: true };
    case 'connecting':
      return { id: 'tunnel', title, done: false, next: 'The tunnel is connecting…' };
    case 'reconnecting':
      return { id: 'tunnel', title, done: false, next: `The tunnel is reconnecting (${tunnel.lastError}).` };
    case 'failed':
      return {
        id: 'tunnel',
        title,
        done: false,
        next: `The tunnel failed: ${tunnel.reason}. Check Settings → Tunnel.`,
      };
    case 'off':
      if (tunnel.provider !== 'none') {
        return { id: 'tunnel', title, done: false, next: 'The tunnel is off: start it in the Tunnel card.' };
      }
      // No tunnel: done only when the operator's own address is one other agents can reach.
      if (isPublicHttpsUrl(agentUrl)) return { id: 'tunnel', title, done: true };
      return {
        id: 'tunnel',
        title,
        done: false,
        next: `No tunnel is configured, and ${agentUrl || 'the agent'} is not a public https:// address, so other agents cannot reach it. Set your public URL (\`--public-url https://…\`, your own proxy's address) or choose a tunnel provider in Settings → Tunnel.`,
      };
  }
}

function registryStep(registry: StatusResponse['registry'], tunnel: StatusResponse['tunnel']): SetupStep {
  const title = 'List the agent in the registry';
  if (registry.status === 'registered') return { id: 'registry', title, done: true };
  if (registry.status === 'registering') return { id: 'registry', title, done: false, next: 'Registering…' };
  const failed = registry.lastError
    ? ` The last attempt failed: ${registry.lastError.message} ${registryFix(registry.lastError, tunnel)}`
    : '';
  return {
    id: 'registry',
    title,
    done: false,
    next: `Register on the Registry page once the public address works.${failed}`,
  };
}
