import type { ApiClient } from '../api/client';
import type { GatewayAgentView, GatewayView, StatusResponse, ToolExposureView } from '../api/contract';
import { OpenAccessWarning, PendingNotice } from '../components/AccessNotices';
import { Address } from '../components/Address';
import { AddressChangeBanner } from '../components/AddressChangeBanner';
import { Badge, type Tone } from '../components/Badge';
import { Card, Field } from '../components/Card';
import { A2ACard } from '../components/A2ACard';
import { CopyButton } from '../components/CopyButton';
import { McpCard, McpCommand, RevealButton, useMcpView, type McpViewState } from '../components/McpCard';
import { NoLocalGateway } from '../components/RemoteGateway';
import { Countdown } from '../components/Countdown';
import { agentName, CheckAgain, GatewayAgentNotices } from '../components/GatewayAgent';
import { HealthSummary } from '../components/HealthSummary';
import { SelfTestPanel } from '../components/SelfTestPanel';
import { SkillsSummaryCard } from '../components/SkillsSummaryCard';
import { ErrorNotice, Loading, Notice } from '../components/States';
import { RichText } from '../components/Text';
import { TrafficChart } from '../components/TrafficChart';
import { useAction } from '../hooks/useAction';
import { formatCount, formatDateTime, formatDuration, formatRelative, formatTime } from '../lib/format';
import { useNow } from '../hooks/useNow';
import { registryFix } from '../lib/registry-advice';
import { setupComplete, setupSteps } from '../lib/setup';
import { gatewayGlance, registryGlance, tunnelGlance } from '../lib/states';
import { pageHref, type PageProps } from './types';

export function Overview({ api, data }: PageProps) {
  const { status, statusError, refreshStatus } = data;
  const mcpView = useMcpView(api);
  if (!status) {
    return statusError ? (
      <ErrorNotice error={statusError} title="Cannot load the agent's status" />
    ) : (
      <Loading />
    );
  }
  return (
    <div className="page overview">
      <h1 className="visually-hidden">Overview</h1>
      <HealthSummary status={status} />
      {statusError ? <ErrorNotice error={statusError} title="Showing the last known status" /> : null}
      <AddressChangeBanner
        api={api}
        tunnel={status.tunnel}
        registry={status.registry}
        onDismissed={refreshStatus}
      />
      {status.access.policy === 'open' ? (
        <OpenAccessWarning agent={agentName(status.gateway.agent)} link />
      ) : null}
      <PendingNotice access={status.access} />
      <StateNotice state={status.state} />
      <GettingStarted status={status} mcpView={mcpView} api={api} onChange={refreshStatus} />
      <div className="grid">
        <IdentityCard agent={status.agent} />
        <TunnelCard api={api} tunnel={status.tunnel} onChange={refreshStatus} />
        <A2ACard a2a={status.a2a} />
        <SkillsSummaryCard skills={status.skills} />
        <GatewayCard api={api} gateway={status.gateway} onChange={refreshStatus} />
        <RegistryCard registry={status.registry} tunnel={status.tunnel} />
        <TrafficCard traffic={status.traffic} />
        <McpCard api={api} mcp={status.mcp} mcpView={mcpView} onChange={refreshStatus} />
        <Card
          title="Self-test"
          testId="selftest"
          help={{ to: 'docs/troubleshooting.md#is-it-working-the-self-test', topic: 'the self-test' }}
        >
          <SelfTestPanel api={api} onDone={refreshStatus} />
        </Card>
      </div>
    </div>
  );
}

/** Replicas on Redis: while it does not answer, every call is refused, so it comes first. */
function StateNotice({ state }: { state: StatusResponse['state'] }) {
  if (state.up) return null;
  return (
    <Notice
      tone="error"
      title="Callers are refused: shared state is unavailable"
      message={state.problem ?? 'Redis does not answer.'}
      testId="state-down"
    />
  );
}

/** Shown until the gateway answers, the address is public and the agent is listed: the first-run guide. */
function GettingStarted({
  status,
  mcpView,
  api,
  onChange,
}: {
  status: StatusResponse;
  mcpView: McpViewState;
  api: ApiClient;
  onChange: () => void;
}) {
  const steps = setupSteps(status);
  // A demo's steps are all optional (nothing to publish), but a newcomer trying it still needs the way on.
  if (!status.demo && setupComplete(steps)) return null;
  return (
    <Card
      title={status.demo ? 'Trying the demo' : 'Getting started'}
      testId="getting-started"
      className="getting-started"
    >
      <ol className="setup-steps">
        {steps.map((step) => (
          <li
            key={step.id}
            data-testid="setup-step"
            data-step={step.id}
            data-state={step.done ? 'done' : 'todo'}
          >
            <span className={`setup-mark ${step.done ? 'done' : 'todo'}`} aria-hidden="true">
              {step.done ? '✓' : '•'}
            </span>
            <span>
              <strong>{step.title}</strong>
              {step.done ? <span className="visually-hidden"> (done)</span> : null}
              {step.next ? (
                <span className="setup-next">
                  <RichText text={step.next} />
                </span>
              ) : null}
              {step.command && !step.done ? <SetupCommand mcpView={mcpView} kind={step.command} /> : null}
              {step.offer === 'remote-gateway' && !step.done ? (
                <NoLocalGateway api={api} onSaved={onChange} />
              ) : null}
            </span>
          </li>
        ))}
      </ol>
    </Card>
  );
}

/** The exact `openclaw mcp` command of the step, fetched with its token (the status never carries it). */
function SetupCommand({ mcpView, kind }: { mcpView: McpViewState; kind: 'mcp-add' | 'mcp-update' }) {
  const { view } = mcpView;
  // A load error shows in the MCP card below.
  if (!view) return <RevealButton mcpView={mcpView} label="Show the command" />;
  return (
    <McpCommand
      command={kind === 'mcp-add' ? view.command : view.updateCommand}
      label="Run where the gateway runs:"
      testId="setup-mcp-command"
    />
  );
}

function IdentityCard({ agent }: { agent: StatusResponse['agent'] }) {
  return (
    <Card
      title="Agent"
      testId="agent-identity"
      help={{ to: 'docs/calling.md', topic: 'calling the agent' }}
      aside={
        <Badge tone={agent.health === 'ok' ? 'ok' : 'warn'}>
          {agent.health === 'ok' ? 'Healthy' : 'Degraded'}
        </Badge>
      }
    >
      <p className="agent-name">{agent.card.name}</p>
      <dl className="fields">
        <Field label="Agent id">
          <span className="copyable">
            <Address value={agent.id} testId="agent-id" />
            <CopyButton value={agent.id} label="Copy agent id" />
          </span>
        </Field>
        <Field label="Public URL">
          <span className="copyable">
            <Address value={agent.url} testId="agent-url" />
            <CopyButton value={agent.url} label="Copy public URL" />
          </span>
        </Field>
        <Field label="Local URL">
          <Address value={agent.localUrl} />
        </Field>
        <Field label="Version">
          {agent.version} · SAMVAD {agent.protocolVersion}
        </Field>
        <Field label="Up for">{formatDuration(agent.uptimeSeconds)}</Field>
        <Field label="Working on">
          {agent.activeRequests} request{agent.activeRequests === 1 ? '' : 's'}, {agent.queuedTasks} queued
          task
          {agent.queuedTasks === 1 ? '' : 's'}
        </Field>
      </dl>
    </Card>
  );
}

/** The reachability check's last finding, with when it was made (kept current while the page is open). */
function Reachability(props: { reachability: NonNullable<TunnelReachabilityView> }) {
  const { state, checkedAt } = props.reachability;
  const now = useNow(5000);
  const what = state === 'checking' ? 'checking now…' : state === 'reachable' ? 'reachable' : 'not reachable';
  return (
    <span data-testid="tunnel-reachability" data-reachability={state}>
      {what}
      {checkedAt && state !== 'checking' ? (
        <span className="muted"> (checked {formatRelative(checkedAt, now, 'past')})</span>
      ) : null}
    </span>
  );
}

type TunnelReachabilityView = Extract<StatusResponse['tunnel'], { status: 'online' }>['reachability'];

function TunnelCard(props: {
  api: ApiClient;
  tunnel: StatusResponse['tunnel'];
  onChange: () => Promise<void>;
}) {
  const { api, tunnel, onChange } = props;
  const start = useAction(async () => {
    await api.startTunnel();
    await onChange();
  });
  const stop = useAction(async () => {
    await api.stopTunnel();
    await onChange();
  });
  const glance = tunnelGlance(tunnel);
  const running = tunnel.status !== 'off' && tunnel.status !== 'failed';
  const noTunnel = tunnel.provider === 'none';
  return (
    <Card
      title="Tunnel"
      testId="tunnel-state"
      help={{ to: 'docs/tunnels.md', topic: 'tunnels and a stable address' }}
      aside={<Badge tone={glance.tone}>{glance.label}</Badge>}
      className={`state-${tunnel.status}`}
    >
      <div data-state={tunnel.status} className="state-body">
        <dl className="fields">
          <Field label="Provider">{noTunnel ? 'none' : tunnel.provider}</Field>
          {tunnel.status === 'online' ? (
            <>
              <Field label="Public URL">
                <span className="copyable">
                  <code title={tunnel.url}>{tunnel.url}</code>
                  <CopyButton value={tunnel.url} label="Copy tunnel URL" />
                </span>
              </Field>
              <Field label="Online since">{formatDateTime(tunnel.since)}</Field>
              {tunnel.reachability ? (
                <Field label="From outside">
                  <Reachability reachability={tunnel.reachability} />
                </Field>
              ) : null}
            </>
          ) : null}
          {tunnel.status === 'connecting' ? <Field label="Attempt">{tunnel.attempt}</Field> : null}
          {tunnel.status === 'reconnecting' ? (
            <>
              <Field label="Next try">
                <Countdown to={tunnel.nextTryAt} doneText="any moment now" /> (attempt {tunnel.attempt})
              </Field>
            </>
          ) : null}
        </dl>
        {tunnel.status === 'online' && tunnel.reachability?.state === 'unreachable' ? (
          <Notice
            tone="error"
            title="Callers cannot reach the agent through this address"
            message={`${tunnel.reachability.problem ?? 'The last call through the public URL failed.'} The agent checks again in a moment and reconnects if it still fails, keeping its address.`}
            testId="tunnel-error"
          />
        ) : null}
        {tunnel.status === 'reconnecting' ? (
          <Notice
            tone="warning"
            title={
              tunnel.keepingName
                ? 'Getting the same address back'
                : tunnel.hint
                  ? 'The tunnel server cannot be reached'
                  : 'The tunnel dropped'
            }
            message={tunnel.lastError}
            fix={tunnel.hint}
            testId="tunnel-error"
          />
        ) : null}
        {tunnel.status === 'failed' ? (
          <Notice tone="error" title="The tunnel gave up" message={tunnel.reason} testId="tunnel-error" />
        ) : null}
        {noTunnel && tunnel.status === 'off' ? (
          <p className="muted">
            No tunnel is configured: callers reach the agent at its public URL (<code>--public-url</code>) or
            not at all. Choose a provider in Settings.
          </p>
        ) : null}
        {start.error ? <ErrorNotice error={start.error} title="Could not start the tunnel" /> : null}
        {stop.error ? <ErrorNotice error={stop.error} title="Could not stop the tunnel" /> : null}
        <div className="actions">
          <button
            type="button"
            className="button"
            onClick={() => void start.run()}
            disabled={start.busy || running || noTunnel}
          >
            {start.busy ? 'Starting…' : tunnel.status === 'failed' ? 'Retry' : 'Start'}
          </button>
          <button
            type="button"
            className="button"
            onClick={() => void stop.run()}
            disabled={stop.busy || !running}
          >
            {stop.busy ? 'Stopping…' : 'Stop'}
          </button>
        </div>
      </div>
    </Card>
  );
}

function GatewayCard(props: { api: ApiClient; gateway: GatewayView; onChange: () => Promise<void> }) {
  const { api, gateway, onChange } = props;
  const glance = gatewayGlance(gateway);
  const { agent } = gateway;
  // The agent-missing notice below says it all, with the snippet: not twice.
  const problem =
    gateway.problem && !(gateway.problem.kind === 'agent-missing' && agent.check === 'missing')
      ? gateway.problem
      : undefined;
  // The agent's alarms carry a config snippet or a decision: give them room.
  const alarm =
    agent.check === 'missing' ||
    agent.tools.verdict === 'exposes-host-tools' ||
    (agent.tools.verdict === 'unknown' && agent.tools.notLoaded !== undefined);
  return (
    <Card
      title="Gateway"
      testId="gateway-state"
      help={{ to: 'docs/security.md#a-restricted-agent-for-callers', topic: 'the agent callers reach' }}
      className={alarm ? 'wide' : undefined}
      aside={<Badge tone={glance.tone}>{glance.label}</Badge>}
    >
      <div data-state={glance.tone} className="state-body">
        <dl className="fields">
          <Field label="Configuration">{gateway.status}</Field>
          <Field label="State">
            <span data-testid="gateway-condition" data-condition={gateway.condition}>
              {CONDITION_WORDS[gateway.condition]} since {formatTime(gateway.since)}
            </span>
          </Field>
          <Field label="URL">{gateway.url ? <code>{gateway.url}</code> : 'not set'}</Field>
          <Field label="Callers reach">
            {agent.id ? (
              <>
                agent <code data-testid="gateway-agent">{agent.id}</code>
              </>
            ) : (
              'an explicit model (no agent check)'
            )}
          </Field>
          <Field label="Model">
            <code>{agent.model}</code>
          </Field>
          <Field label="Agent check">
            <span data-testid="agent-check" data-check={agent.check}>
              {agentCheckText(agent)}
            </span>
          </Field>
          <Field label="Tools">
            <span data-testid="agent-tools" data-verdict={agent.tools.verdict}>
              <Badge tone={toolsTone(agent.tools.verdict)}>{toolsLabel(agent.tools.verdict)}</Badge>
            </span>
          </Field>
          <Field label="Last health check">
            {gateway.checkedAt
              ? `${formatDateTime(gateway.checkedAt)}: ${gateway.live ? 'answered' : 'no answer'}`
              : 'not yet'}
          </Field>
          {gateway.lastCallOk !== undefined ? (
            <Field label="Last chat call">{gateway.lastCallOk ? 'succeeded' : 'failed'}</Field>
          ) : null}
        </dl>
        <GatewayAgentNotices agent={agent} api={api} onChecked={onChange} />
        {agent.check === 'skipped' ? (
          <p className="muted small" data-testid="agent-skipped">
            An explicit model (<code>{agent.model}</code>) is set, so the bridge cannot check that the agent
            exists or which tools it offers callers, and does not stop calls when it is missing. Leave Model
            empty in Settings → Gateway to send callers to an OpenClaw agent that is checked.
          </p>
        ) : null}
        {agent.check === 'unknown' && agent.detail ? (
          <p className="muted small" data-testid="agent-unknown">
            Could not check the agent: {agent.detail}.
          </p>
        ) : null}
        {agent.tools.verdict === 'unknown' &&
        !agent.tools.notLoaded &&
        agent.check !== 'skipped' &&
        agent.check !== 'missing' ? (
          <p className="muted small" data-testid="tools-unknown">
            Tool policy unknown: <RichText text={agent.tools.detail} />
          </p>
        ) : null}
        {agent.tools.verdict === 'restricted' ? (
          <p className="muted small">
            <RichText text={agent.tools.detail} />
          </p>
        ) : null}
        {!alarm ? <CheckAgain api={api} onChecked={onChange} compact /> : null}
        {problem ? (
          <Notice
            tone="error"
            title={problem.kind}
            message={problem.diagnosis}
            fix={problem.fix}
            testId="gateway-problem"
          >
            <p className="notice-meta">Seen {formatDateTime(problem.at)}</p>
          </Notice>
        ) : null}
      </div>
    </Card>
  );
}

const CONDITION_WORDS: Record<GatewayView['condition'], string> = {
  up: 'answering',
  down: 'not answering',
  'token-wrong': 'refusing the token',
  'agent-missing': 'no agent for callers',
  failing: 'chat calls failing',
  unknown: 'not checked yet',
  'not-configured': 'not configured',
};

function agentCheckText(agent: GatewayAgentView): string {
  switch (agent.check) {
    case 'present':
      return `found on the gateway${agent.checkedAt ? ` (checked ${formatTime(agent.checkedAt)})` : ''}`;
    case 'missing':
      return 'missing on the gateway';
    case 'unknown':
      return 'could not check';
    case 'skipped':
      return 'not checked (explicit model)';
    case 'checking':
      return 'checking…';
  }
}

function toolsTone(verdict: ToolExposureView['verdict']): Tone {
  return verdict === 'restricted' ? 'ok' : verdict === 'exposes-host-tools' ? 'bad' : 'neutral';
}

function toolsLabel(verdict: ToolExposureView['verdict']): string {
  return verdict === 'restricted'
    ? 'restricted'
    : verdict === 'exposes-host-tools'
      ? 'exposes host tools'
      : 'unknown';
}

function RegistryCard({ registry, tunnel }: Pick<StatusResponse, 'registry' | 'tunnel'>) {
  const glance = registryGlance(registry);
  return (
    <Card
      title="Registry"
      testId="registry-state"
      aside={<Badge tone={glance.tone}>{glance.label}</Badge>}
      help={{ to: 'docs/registry.md', topic: 'the registry' }}
    >
      <div data-state={registry.status} className="state-body">
        {registry.status === 'registered' ? (
          <dl className="fields">
            <Field label="Registry">
              <code>{registry.record.registry}</code>
            </Field>
            <Field label="Listed as">
              {registry.record.name} (<code>{registry.record.id}</code>)
            </Field>
            <Field label="Registered">{formatDateTime(registry.record.registeredAt)}</Field>
          </dl>
        ) : null}
        {registry.status === 'registering' ? (
          <p className="muted">
            <span className="spinner" aria-hidden="true" /> Registering <code>{registry.url}</code>…
          </p>
        ) : null}
        {registry.status === 'unregistered' && !registry.lastError ? (
          <p className="muted">Not listed yet: other agents can call it only if they know its URL.</p>
        ) : null}
        {registry.status !== 'registering' && registry.lastError ? (
          <Notice
            tone="error"
            title="Registration failed"
            message={registry.lastError.message}
            fix={registryFix(registry.lastError, tunnel)}
            testId="registry-error"
          />
        ) : null}
        <div className="actions">
          <a className="button" href={pageHref('registry')}>
            {registry.status === 'registered' ? 'Manage registration' : 'Register…'}
          </a>
        </div>
      </div>
    </Card>
  );
}

function TrafficCard({ traffic }: { traffic: StatusResponse['traffic'] }) {
  const minutes = traffic.perMinute;
  const accepted = minutes.reduce((sum, minute) => sum + minute.accepted, 0);
  const refused = minutes.reduce((sum, minute) => sum + minute.refused, 0);
  const lastMinute = minutes[minutes.length - 1];
  return (
    <Card
      title="Traffic"
      testId="traffic-summary"
      help={{ to: 'docs/console.md#traffic', topic: 'traffic' }}
      aside={
        <a className="button small ghost" href={pageHref('traffic')}>
          Open log
        </a>
      }
    >
      <p className="stats-caption">Last {minutes.length} minutes</p>
      <div className="stats">
        <div className="stat">
          <span className="stat-value">{lastMinute ? lastMinute.accepted + lastMinute.refused : 0}</span>
          <span className="stat-label">this minute</span>
        </div>
        <div className="stat">
          <span className="stat-value">{formatCount(accepted)}</span>
          <span className="stat-label">accepted</span>
        </div>
        <div className="stat">
          <span className={`stat-value ${refused > 0 ? 'bad' : ''}`}>{formatCount(refused)}</span>
          <span className="stat-label">refused</span>
        </div>
      </div>
      <TrafficChart minutes={minutes} />
      <p className="muted small">
        Since start: {formatCount(traffic.accepted)} accepted, {formatCount(traffic.refused)} refused.
      </p>
    </Card>
  );
}
