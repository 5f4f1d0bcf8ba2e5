/**
 * The MCP server through which the operator's own agent calls other agents: its address, its token (shown
 * on request), the exact `openclaw mcp` command, a new token (confirmed: the gateway's config holds the old
 * one), whether the gateway's config lists it, and the policy that keeps it from the agent strangers reach.
 */
import { useCallback, useState } from 'react';
import type { ApiClient, ApiRequestError } from '../api/client';
import type { McpResponse, McpStatusView } from '../api/contract';
import { asApiError, useAction } from '../hooks/useAction';
import { pageHref } from '../pages/types';
import { Badge, type Tone } from './Badge';
import { Card, Field } from './Card';
import { ConfirmDialog } from './ConfirmDialog';
import { CopyButton } from './CopyButton';
import { ErrorNotice, Notice } from './States';

export type McpViewState = ReturnType<typeof useMcpView>;

/**
 * The token and the commands, loaded only when the operator asks (GET /api/mcp; the status never carries
 * the token), then whatever a new token's answer says. Shared by the MCP card and the Getting started step.
 */
export function useMcpView(api: ApiClient) {
  const [view, setView] = useState<McpResponse | null>(null);
  const [error, setError] = useState<ApiRequestError | null>(null);
  const [busy, setBusy] = useState(false);
  const reveal = useCallback(async () => {
    setBusy(true);
    try {
      setView(await api.mcp());
      setError(null);
    } catch (caught) {
      setError(asApiError(caught));
    } finally {
      setBusy(false);
    }
  }, [api]);
  return { view, error, busy, setView, reveal };
}

/** "Show the command": loads the token on request. */
export function RevealButton({ mcpView, label }: { mcpView: McpViewState; label: string }) {
  return (
    <div className="actions">
      <button
        type="button"
        className="button small"
        data-testid="mcp-reveal"
        onClick={() => void mcpView.reveal()}
        disabled={mcpView.busy}
      >
        {mcpView.busy ? 'Loading…' : label}
      </button>
    </div>
  );
}

/** A command to paste where the gateway runs (it carries the token), with its copy button. */
export function McpCommand({ command, label, testId }: { command: string; label: string; testId: string }) {
  return (
    <div className="snippet">
      <div className="snippet-head">
        <span className="preview-label">{label}</span>
        <CopyButton value={command} label={`Copy: ${label}`} />
      </div>
      <pre className="preview snippet-code" data-testid={testId} tabIndex={0}>
        {command}
      </pre>
    </div>
  );
}

/** `openclaw mcp probe <server> --json`: the server is the prefix of its tools' names (`<server>__*`). */
export function probeCommand(toolGlob: string): string {
  return `openclaw mcp probe ${toolGlob.replace(/__\*$/, '')} --json`;
}

function glance(mcp: McpStatusView): { tone: Tone; label: string } {
  if (mcp.outbound === 'off') return { tone: 'neutral', label: 'calls out off' };
  if (mcp.movedFrom || mcp.gatewayConfigProblem) return { tone: 'warn', label: 'needs an update' };
  if (mcp.listedInGatewayConfig === true) return { tone: 'ok', label: 'listed by the gateway' };
  if (mcp.listedInGatewayConfig === false) return { tone: 'warn', label: 'not connected' };
  return { tone: 'neutral', label: 'cannot check' };
}

const OUTBOUND_WORDS: Record<McpStatusView['outbound'], string> = {
  any: 'to any agent',
  allowlist: 'only to the agents you listed',
  off: 'off: every call is refused',
};

interface McpCardProps {
  api: ApiClient;
  mcp: McpStatusView;
  /** The token and commands (useMcpView), shared with the Getting started step. */
  mcpView: McpViewState;
  onChange: () => Promise<void>;
}

export function McpCard({ api, mcp, mcpView, onChange }: McpCardProps) {
  const { view, error, setView } = mcpView;
  const [confirming, setConfirming] = useState(false);
  const [fresh, setFresh] = useState(false);
  const regenerate = useAction(async () => {
    const next = await api.regenerateMcpToken();
    setView(next);
    setConfirming(false);
    setFresh(true);
    await onChange();
    return next;
  });
  const state = glance(mcp);
  const needsUpdate = fresh || Boolean(mcp.movedFrom) || Boolean(mcp.gatewayConfigProblem);
  return (
    <Card
      title="Your agent calls other agents"
      testId="mcp-card"
      help={{ to: 'docs/mcp.md#connect-openclaw', topic: 'connecting OpenClaw to the MCP tools' }}
      className="wide"
      aside={
        <span data-testid="mcp-state" data-listed={String(mcp.listedInGatewayConfig ?? 'unknown')}>
          <Badge tone={state.tone}>{state.label}</Badge>
        </span>
      }
    >
      <p className="muted small">
        Your OpenClaw agent can look up and call other agents through this bridge, every call shown in Traffic
        as <strong>out</strong>: SAMVAD agents (MCP tools <code>samvad_agent_card</code>,{' '}
        <code>samvad_call</code>, <code>samvad_task</code>), signed with this agent’s key and every signed
        reply verified; and A2A agents (<code>a2a_agent_card</code>, <code>a2a_send</code>,{' '}
        <code>a2a_task</code>), with the credentials they require kept on the Access page (<em>Calls out</em>
        ).
      </p>
      <dl className="fields">
        <Field label="MCP URL">
          <span className="copyable">
            <code data-testid="mcp-url" title={mcp.url}>
              {mcp.url}
            </code>
            <CopyButton value={mcp.url} label="Copy MCP URL" />
          </span>
        </Field>
        <Field label="Token">
          {view ? (
            <span className="copyable">
              <code data-testid="mcp-token">{view.token}</code>
              <CopyButton value={view.token} label="Copy MCP token" />
            </span>
          ) : (
            <span className="muted">
              kept in <code>mcp.json</code> in the data folder; shown on request
            </span>
          )}
        </Field>
        <Field label="Calls out">
          <span data-testid="mcp-outbound" data-outbound={mcp.outbound}>
            {OUTBOUND_WORDS[mcp.outbound]}
          </span>{' '}
          (<a href={pageHref('access')}>change on the Access page</a>)
        </Field>
      </dl>

      {mcp.movedFrom ? (
        <Notice
          tone="warning"
          title="The MCP address changed"
          message={`The console's usual port was busy, so the MCP server is at ${mcp.url} this time, not ${mcp.movedFrom}. Your gateway's config points at the usual one: free that port and restart the bridge, or update the gateway with the command below.`}
          testId="mcp-moved"
        />
      ) : null}
      {mcp.gatewayConfigProblem ? (
        <Notice tone="warning" message={mcp.gatewayConfigProblem} testId="mcp-config-problem" />
      ) : null}
      {fresh ? (
        <Notice
          tone="success"
          message="New token made: the old one no longer works. Update the gateway with the command below."
          testId="mcp-regenerated"
        />
      ) : null}
      {error ? (
        <Notice
          tone="warning"
          title="Cannot load the MCP token"
          message={error.message}
          fix={error.fix}
          testId="mcp-load-error"
        />
      ) : null}

      {view ? (
        needsUpdate || mcp.listedInGatewayConfig === true ? (
          <McpCommand
            command={view.updateCommand}
            label="Update the gateway's entry (run it where the gateway runs):"
            testId="mcp-update-command"
          />
        ) : (
          <McpCommand
            command={view.command}
            label="Connect your agent (run it where the gateway runs):"
            testId="mcp-command"
          />
        )
      ) : (
        <RevealButton mcpView={mcpView} label="Show the token and the command" />
      )}

      {mcp.outbound !== 'off' ? (
        <McpCommand
          command={probeCommand(mcp.toolGlob)}
          label="See the tools your gateway gets (without --json it prints only a count):"
          testId="mcp-probe-command"
        />
      ) : null}

      <details className="mcp-policy">
        <summary>Keep these tools from callers</summary>
        <p className="muted small">
          Strangers reach your gateway through the agent for callers: it must not call other agents with your
          identity. Deny this server’s tools (<code>{mcp.toolGlob}</code>) in that agent’s tool policy, in{' '}
          <code>~/.openclaw/openclaw.json</code>:
        </p>
        <div className="snippet">
          <div className="snippet-head">
            <span className="preview-label">Merge into the agent’s entry:</span>
            <CopyButton value={mcp.policySnippet} label="Copy the tool policy" />
          </div>
          <pre className="preview snippet-code" data-testid="mcp-policy-snippet" tabIndex={0}>
            {mcp.policySnippet}
          </pre>
        </div>
      </details>

      <div className="actions">
        <button
          type="button"
          className="button"
          data-testid="mcp-regenerate"
          onClick={() => {
            regenerate.reset();
            setConfirming(true);
          }}
          disabled={regenerate.busy}
        >
          New token…
        </button>
      </div>

      <ConfirmDialog
        open={confirming}
        title="Make a new MCP token?"
        confirmLabel="Make a new token"
        tone="danger"
        busy={regenerate.busy}
        onCancel={() => setConfirming(false)}
        onConfirm={() => void regenerate.run()}
      >
        <p>
          The current token stops working at once. Your gateway’s config holds it, so{' '}
          <strong>your agent cannot call other agents until you update the gateway</strong> with the command
          shown next.
        </p>
        {regenerate.error ? <ErrorNotice error={regenerate.error} title="No new token" /> : null}
      </ConfirmDialog>
    </Card>
  );
}
