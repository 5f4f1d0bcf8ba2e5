/**
 * The agent on the gateway that callers reach, and what it can do: the bridge's security boundary
 * (GATEWAY.md, "Who the caller becomes on the gateway"). Shown on the Overview and in Settings → Gateway.
 */
import { useEffect, useRef, useState } from 'react';
import { ApiRequestError, type ApiClient } from '../api/client';
import type { GatewayAgentView, GatewayCheckResponse } from '../api/contract';
import { useAction } from '../hooks/useAction';
import { useNow } from '../hooks/useNow';
import { formatDateTime, formatTime } from '../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import { CopyButton } from './CopyButton';
import { ErrorNotice, Notice } from './States';
import { RichText } from './Text';

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
          Merge into <code>~/.openclaw/openclaw.json</code> (the gateway applies it without a restart):
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

/** How long "Check again" keeps asking while the console answers "still checking" (a very slow gateway). */
const CHECK_GIVE_UP_MS = 60_000;

/**
 * POST /api/gateway/check: probes the gateway now, after the operator changed or restarted it. A slow probe
 * is answered "still checking" (202) with what it waits for; the button then asks again, which waits for the
 * same probe, and shows the progress meanwhile.
 */
export function CheckAgain({ api, onChecked, compact = false }: CheckAgainButtonProps) {
  const [progress, setProgress] = useState<GatewayCheckResponse['checking']>();
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
    },
    [],
  );
  const check = useAction(async () => {
    const started = Date.now();
    try {
      let answer = await api.checkGatewayAgent();
      while (answer.checking && alive.current) {
        setProgress(answer.checking);
        if (Date.now() - started > CHECK_GIVE_UP_MS) {
          throw new ApiRequestError(
            0,
            `The gateway has not answered the check after ${Math.round((Date.now() - started) / 1000)} s (waiting for ${waitingText(answer.checking)}).`,
            'Look at the gateway where it runs (is it restarting or overloaded?), then check again.',
          );
        }
        answer = await api.checkGatewayAgent();
      }
      await onChecked();
      return answer.agent;
    } finally {
      if (alive.current) setProgress(undefined);
    }
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
        {check.busy && progress ? <StillChecking progress={progress} /> : null}
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

/** The probe under way: for how long, and which requests to the gateway have not answered yet. */
function StillChecking({ progress }: { progress: NonNullable<GatewayCheckResponse['checking']> }) {
  const now = useNow(1000);
  const seconds = Math.max(0, Math.round((now - Date.parse(progress.since)) / 1000));
  return (
    <span className="muted small" role="status" data-testid="still-checking">
      Still checking ({seconds} s): waiting for {waitingText(progress)}.
    </span>
  );
}

function waitingText(progress: NonNullable<GatewayCheckResponse['checking']>): string {
  return progress.waitingFor.length > 0 ? progress.waitingFor.join(' and ') : 'the gateway';
}

function checkOutcome(agent: GatewayAgentView): string {
  if (agent.check === 'missing') return 'the agent is still missing.';
  if (agent.tools.verdict === 'unknown' && agent.tools.notLoaded)
    return 'OpenClaw still runs another config.';
  if (agent.tools.verdict === 'exposes-host-tools') return 'it still exposes host tools.';
  if (agent.check === 'unknown') return 'the gateway could not say.';
  return 'looks right now.';
}

interface AgentNoticesProps extends CheckAgainProps {
  agent: GatewayAgentView;
}

/**
 * The states in which the bridge must not be left as it is: callers reach the operator's machine (an agent
 * with host tools: refused until accepted, then a standing warning), reach nothing at all (the agent is
 * missing), or an agent the bridge cannot check (OpenClaw has not loaded its config file). Each with the fix.
 */
export function GatewayAgentNotices({ agent, api, onChecked }: AgentNoticesProps) {
  const name = agentName(agent);
  if (agent.tools.verdict === 'exposes-host-tools') {
    return <ExposedAgentNotice agent={agent} tools={agent.tools} api={api} onChecked={onChecked} />;
  }
  if (agent.tools.verdict === 'unknown' && agent.tools.notLoaded) {
    return (
      <Notice
        tone="error"
        title={`Callers are refused: OpenClaw has not loaded its config file`}
        testId="config-not-loaded"
      >
        <p className="notice-message">
          <RichText text={agent.tools.detail} />
        </p>
        <p className="notice-fix">
          <span className="fix-label">Fix: </span>
          run <code>openclaw config validate</code> where the gateway runs and fix what it reports; the
          gateway reloads a valid file by itself. Until the file and the gateway agree, every call to “{name}”
          is refused.
        </p>
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
          add this restricted agent to the gateway’s config (OpenClaw applies it without a restart), then
          check again. Or choose one it has for callers (Settings → Gateway, “Agent for callers”).
        </p>
        <AgentSnippet snippet={agent.snippet} />
        <CheckAgain api={api} onChecked={onChecked} />
      </Notice>
    );
  }
  return null;
}

interface ExposedAgentProps extends CheckAgainProps {
  agent: GatewayAgentView;
  tools: { tools: string[]; detail: string };
}

/**
 * An agent offered host tools. Callers are refused until the operator accepts exactly this agent with
 * exactly these tools (a new tool asks again); after that a standing warning, with the way back.
 */
function ExposedAgentNotice({ agent, tools, api, onChecked }: ExposedAgentProps) {
  const name = agentName(agent);
  const [confirming, setConfirming] = useState(false);
  const accept = useAction(async () => {
    await api.acceptGatewayAgent(name, tools.tools);
    setConfirming(false);
    await onChecked();
  });
  const withdraw = useAction(async () => {
    await api.withdrawGatewayAgent();
    await onChecked();
  });
  const acceptance = agent.acceptance ?? { state: 'needed' };
  const accepted = acceptance.state === 'accepted';
  const toolList = (
    <span className="tool-list">
      {tools.tools.map((tool) => (
        <code key={tool}>{tool}</code>
      ))}
    </span>
  );
  return (
    <Notice
      tone={accepted ? 'warning' : 'error'}
      title={
        accepted
          ? `Callers reach this machine through agent “${name}”: you accepted it`
          : `Callers are refused: agent “${name}” can reach this machine`
      }
      testId="host-tools-warning"
    >
      <p className="notice-message">
        The agent callers reach on your gateway is offered host tools: {toolList}. Anyone you let in can ask
        it to run commands, or to read and change files, on this machine.{' '}
        {accepted
          ? `You accepted that on ${formatDateTime(acceptance.at)}; the bridge asks again if its tools change.`
          : 'Until you decide, every call is refused, as if the agent were missing.'}
      </p>
      {acceptance.state === 'changed' ? (
        <p className="notice-message" data-testid="acceptance-changed">
          You accepted it on {formatDateTime(acceptance.at)} with{' '}
          {acceptance.tools.length > 0 ? acceptance.tools.join(', ') : 'no host tools'}; its tools have
          changed since, so callers are refused again.
        </p>
      ) : null}
      <p className="notice-meta">{tools.detail}</p>
      <p className="notice-fix">
        <span className="fix-label">Fix: </span>
        give callers a restricted agent: add the entry below (or deny these tools in the agent’s{' '}
        <code>tools</code>), then check again. Or choose a restricted agent for callers (Settings → Gateway,
        “Agent for callers”).
      </p>
      <AgentSnippet snippet={agent.snippet} />
      <div className="actions">
        {accepted ? (
          <button
            type="button"
            className="button"
            data-testid="withdraw-exposed-agent"
            onClick={() => void withdraw.run()}
            disabled={withdraw.busy}
          >
            {withdraw.busy ? 'Refusing…' : 'Refuse callers again'}
          </button>
        ) : (
          <button
            type="button"
            className="button danger"
            data-testid="accept-exposed-agent"
            onClick={() => {
              accept.reset();
              setConfirming(true);
            }}
          >
            Serve callers with these tools…
          </button>
        )}
      </div>
      {withdraw.error ? <ErrorNotice error={withdraw.error} title="Callers are still served" /> : null}
      <CheckAgain api={api} onChecked={onChecked} />
      <ConfirmDialog
        open={confirming}
        title={`Let callers reach agent “${name}” with host tools?`}
        confirmLabel="Accept and serve callers"
        tone="danger"
        busy={accept.busy}
        onCancel={() => setConfirming(false)}
        onConfirm={() => void accept.run()}
      >
        <p>
          Every caller your access policy lets in can then ask “{name}” to use {toolList} on this machine,
          with your accounts and files. A prompt-injection screen does not stop that.
        </p>
        <p>
          You accept these tools only: if the agent is offered other tools later, callers are refused again.
        </p>
        {accept.error ? <ErrorNotice error={accept.error} title="Nothing was accepted" /> : null}
      </ConfirmDialog>
    </Notice>
  );
}
