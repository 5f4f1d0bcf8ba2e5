/**
 * The agent on the gateway that callers reach, and what it can do: the bridge's security boundary
 * (GATEWAY.md, "Who the caller becomes on the gateway"). Shown on the Overview and in Settings → Gateway.
 */
import type { ApiClient } from '../api/client';
import type { GatewayAgentView } from '../api/contract';
import { useAction } from '../hooks/useAction';
import { formatTime } from '../lib/format';
import { CopyButton } from './CopyButton';
import { ErrorNotice, Notice } from './States';

/** How the agent reads in one phrase: "openclaw/public" or the explicit model. */
export function agentName(agent: GatewayAgentView): string {
  return agent.id ?? agent.model;
}

/** The restricted agent's config, to copy into ~/.openclaw/openclaw.json. */
export function AgentSnippet({ snippet }: { snippet: string }) {
  return (
    <div className="snippet">
      <div className="snippet-head">
        <span className="preview-label">
          Add to <code>~/.openclaw/openclaw.json</code>, then restart the gateway:
        </span>
        <CopyButton value={snippet} label="Copy the agent config" />
      </div>
      <pre className="preview snippet-code" data-testid="agent-snippet" tabIndex={0}>
        {snippet}
      </pre>
    </div>
  );
}

interface CheckAgainProps {
  api: ApiClient;
  /** After the check: refresh whatever shows the agent. */
  onChecked: () => Promise<void>;
}

interface CheckAgainButtonProps extends CheckAgainProps {
  /** A small button: when nothing is wrong, checking is not the thing to do next. */
  compact?: boolean;
}

/** POST /api/gateway/check: after the operator changed the gateway's config. */
export function CheckAgain({ api, onChecked, compact = false }: CheckAgainButtonProps) {
  const check = useAction(async () => {
    const { agent } = await api.checkGatewayAgent();
    await onChecked();
    return agent;
  });
  return (
    <div className="check-again">
      <div className="actions">
        <button
          type="button"
          className={`button ${compact ? 'small' : ''}`}
          onClick={() => void check.run()}
          disabled={check.busy}
        >
          {check.busy ? 'Checking…' : 'Check again'}
        </button>
        {check.result && !check.busy ? (
          <span className="muted small" role="status">
            Checked {formatTime(check.result.checkedAt ?? new Date().toISOString())}:{' '}
            {checkOutcome(check.result)}
          </span>
        ) : null}
      </div>
      {check.error ? <ErrorNotice error={check.error} title="Could not check the agent" /> : null}
    </div>
  );
}

function checkOutcome(agent: GatewayAgentView): string {
  if (agent.check === 'missing') return 'the agent is still missing.';
  if (agent.tools.verdict === 'exposes-host-tools') return 'it still exposes host tools.';
  if (agent.check === 'unknown') return 'the gateway could not say.';
  return 'looks right now.';
}

interface AgentNoticesProps extends CheckAgainProps {
  agent: GatewayAgentView;
}

/**
 * The two states in which the bridge must not be left as it is: callers reach the operator's machine
 * (red: host tools), or reach nothing at all (red: the agent is missing). Each with the fix and the snippet.
 */
export function GatewayAgentNotices({ agent, api, onChecked }: AgentNoticesProps) {
  const name = agentName(agent);
  if (agent.tools.verdict === 'exposes-host-tools') {
    return (
      <Notice
        tone="error"
        title={`Callers can reach this machine through agent “${name}”`}
        testId="host-tools-warning"
      >
        <p className="notice-message">
          The agent callers reach on your gateway is offered host tools:{' '}
          <span className="tool-list">
            {agent.tools.tools.map((tool) => (
              <code key={tool}>{tool}</code>
            ))}
          </span>
          . Anyone you let in can ask it to run commands, or to read and change files, on this machine.
        </p>
        <p className="notice-meta">{agent.tools.detail}</p>
        <p className="notice-fix">
          <span className="fix-label">Fix: </span>
          give callers a restricted agent: add the entry below (or deny these tools in the agent’s{' '}
          <code>tools</code>), restart the gateway, then check again. Or choose a restricted agent for callers
          (Settings → Gateway, “Agent for callers”).
        </p>
        <AgentSnippet snippet={agent.snippet} />
        <CheckAgain api={api} onChecked={onChecked} />
      </Notice>
    );
  }
  if (agent.check === 'missing') {
    const listed = agent.available?.length ? agent.available.join(', ') : undefined;
    return (
      <Notice
        tone="error"
        title={`The gateway has no agent “${name}”: nothing is forwarded`}
        testId="agent-missing"
      >
        <p className="notice-message">
          Every call is refused until the agent callers reach exists on the gateway
          {listed ? (
            <>
              {' '}
              (it lists: <code>{listed}</code>)
            </>
          ) : null}
          .
        </p>
        <p className="notice-fix">
          <span className="fix-label">Fix: </span>
          add this restricted agent to the gateway’s config, restart the gateway, then check again. Or choose
          one it has for callers (Settings → Gateway, “Agent for callers”).
        </p>
        <AgentSnippet snippet={agent.snippet} />
        <CheckAgain api={api} onChecked={onChecked} />
      </Notice>
    );
  }
  return null;
}
