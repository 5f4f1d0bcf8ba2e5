/**
 * Calls out: which agents the operator's own agent may call through the bridge's MCP tools (settings
 * `outbound` and `outboundAllowed`), whether their unsigned replies are used (`outboundRequireSignedReplies`)
 * and the credentials A2A agents require, on the Access page beside who may call in. The cap and the
 * timeout are shown; Settings changes them.
 */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ApiClient, ApiRequestError } from '../api/client';
import type { SettingsResponse } from '../api/contract';
import { asApiError, useAction } from '../hooks/useAction';
import { AgentIdForm } from './AgentIdForm';
import { PolicyChoice } from './PolicyChoice';
import { Badge } from './Badge';
import { Card } from './Card';
import { CopyButton } from './CopyButton';
import { OutboundBudgets } from './OutboundBudgets';
import { OutboundCredentials } from './OutboundCredentials';
import { ErrorNotice, Loading, Notice } from './States';

// An agent to call: a SAMVAD agent:// id, or an A2A agent's https base URL (as src/settings checks them).
const HOST = '([A-Za-z0-9.-]+(:[0-9]{1,5})?|\\[[0-9A-Fa-f:.]+\\](:[0-9]{1,5})?)';
const OUTBOUND_TARGET = new RegExp(`^(agent://${HOST}|https://${HOST}/?)$`);

type Outbound = 'any' | 'allowlist' | 'off';

export const OUTBOUND_POLICIES: readonly { value: Outbound; title: string; text: string }[] = [
  {
    value: 'any',
    title: 'Any agent',
    text: 'Your agent may call any SAMVAD or A2A agent at a public https address. SAMVAD calls are signed as this agent and their replies verified; every call is logged in Traffic.',
  },
  {
    value: 'allowlist',
    title: 'Only the agents listed below',
    text: 'Calls to any other agent are refused, and the refusal is logged.',
  },
  {
    value: 'off',
    title: 'Off',
    text: 'Your agent cannot call other agents through the bridge: every call is refused.',
  },
];

interface OutboundSettings {
  outbound: Outbound;
  outboundAllowed: string[];
  outboundRequireSignedReplies: boolean;
  outboundPerMinute?: number;
  outboundTimeoutMs?: number;
}

function outboundOf(view: SettingsResponse): OutboundSettings {
  const settings = view.settings;
  const outbound =
    settings.outbound === 'allowlist' || settings.outbound === 'off' ? settings.outbound : 'any';
  const allowed = Array.isArray(settings.outboundAllowed)
    ? settings.outboundAllowed.filter((id): id is string => typeof id === 'string')
    : [];
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  return {
    outbound,
    outboundAllowed: allowed,
    outboundRequireSignedReplies: settings.outboundRequireSignedReplies === true,
    outboundPerMinute: number(settings.outboundPerMinute),
    outboundTimeoutMs: number(settings.outboundTimeoutMs),
  };
}

export function CallsOutCard({ api, onSaved }: { api: ApiClient; onSaved: () => Promise<void> }) {
  const [saved, setSaved] = useState<OutboundSettings | null>(null);
  const [loadError, setLoadError] = useState<ApiRequestError | null>(null);
  const [choice, setChoice] = useState<Outbound | null>(null);
  const name = useId();

  const load = useCallback(async () => {
    try {
      setSaved(outboundOf(await api.settings()));
      setLoadError(null);
    } catch (error) {
      setLoadError(asApiError(error));
    }
  }, [api]);
  useEffect(() => {
    void load();
  }, [load]);

  // What the next save sends: the policy chosen above, or a new list.
  const change = useRef<Partial<OutboundSettings>>({});
  const save = useAction(async () => {
    const response = await api.updateSettings(change.current);
    setSaved(outboundOf(response));
    setChoice(null);
    await onSaved();
    return change.current;
  });
  const apply = (next: Partial<OutboundSettings>) => {
    change.current = next;
    return save.run();
  };

  if (!saved) {
    return (
      <Card title="Calls out: whom your agent may call" testId="calls-out">
        {loadError ? <ErrorNotice error={loadError} title="Cannot load the outbound policy" /> : <Loading />}
      </Card>
    );
  }
  const selected = choice ?? saved.outbound;
  const changed = selected !== saved.outbound;
  const setAllowed = (list: string[]) => apply({ outboundAllowed: list });
  return (
    <Card
      title="Calls out: whom your agent may call"
      testId="calls-out"
      help={{ to: 'docs/mcp.md#who-your-agent-may-call', topic: 'calls out' }}
      aside={<Badge tone={saved.outbound === 'off' ? 'neutral' : 'info'}>{saved.outbound}</Badge>}
    >
      <p className="muted small">
        Your own agent calls other agents through this bridge’s MCP server (see the Overview). Calls to
        private, link-local or loopback addresses are always refused.
        {saved.outboundPerMinute !== undefined && saved.outboundTimeoutMs !== undefined
          ? ` At most ${saved.outboundPerMinute} requests a minute (each card fetch, call and task poll), each call within ${Math.round(saved.outboundTimeoutMs / 1000)} s (Settings).`
          : ''}
      </p>
      <form
        className="policy-form"
        data-outbound={saved.outbound}
        onSubmit={(event) => {
          event.preventDefault();
          void apply({ outbound: selected });
        }}
      >
        <PolicyChoice
          name={name}
          legend="Outbound policy"
          options={OUTBOUND_POLICIES}
          selected={selected}
          current={saved.outbound}
          testIdPrefix="outbound"
          onChoose={(value) => {
            save.reset();
            setChoice(value);
          }}
        />
        {save.error ? <ErrorNotice error={save.error} title="Not saved" /> : null}
        <div className="actions">
          <button type="submit" className="button primary" disabled={!changed || save.busy}>
            {save.busy ? 'Saving…' : 'Save'}
          </button>
          {changed ? (
            <button type="button" className="button" onClick={() => setChoice(null)} disabled={save.busy}>
              Discard
            </button>
          ) : null}
        </div>
      </form>

      <h3 className="subhead">Replies without a signature</h3>
      <div className="checkbox-row">
        <input
          id={`${name}-signed`}
          type="checkbox"
          data-testid="outbound-require-signed"
          checked={saved.outboundRequireSignedReplies}
          disabled={save.busy}
          onChange={(event) => void apply({ outboundRequireSignedReplies: event.target.checked })}
        />
        <label htmlFor={`${name}-signed`}>Refuse replies that carry no signature</label>
      </div>
      <p className="muted small">
        Agents built with the protocol’s own SDKs sign no replies.{' '}
        {saved.outboundRequireSignedReplies
          ? 'Your agent cannot use their answers: every unsigned reply is refused, and Traffic says so.'
          : 'Their replies are used and marked unsigned, in Traffic and in what your agent reads (their authenticity rests on HTTPS).'}{' '}
        A reply whose signature is present but wrong is always refused.
      </p>

      <h3 className="subhead">Agents your agent may call</h3>
      {saved.outboundAllowed.length === 0 ? (
        <p className="muted small" data-testid="outbound-allowed-empty">
          None listed.
          {saved.outbound === 'allowlist'
            ? ' With this policy, every call is refused until you add one.'
            : ''}
        </p>
      ) : (
        <ul className="outbound-allowed" data-testid="outbound-allowed">
          {saved.outboundAllowed.map((id) => (
            <li key={id} data-agent={id}>
              <span className="copyable">
                <code>{id}</code>
                <CopyButton value={id} label={`Copy ${id}`} />
              </span>
              <button
                type="button"
                className="button small"
                disabled={save.busy}
                onClick={() => void setAllowed(saved.outboundAllowed.filter((other) => other !== id))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {saved.outbound !== 'allowlist' && saved.outboundAllowed.length > 0 ? (
        <Notice
          tone="info"
          message="The list applies only when the policy is “Only the agents listed below”."
        />
      ) : null}
      <AgentIdForm
        label="Add an agent"
        placeholder="agent://weather.example.com or https://agent.example.com"
        accept={{
          pattern: OUTBOUND_TARGET,
          message:
            'Name a SAMVAD agent by its id (agent://weather.example.com) or an A2A agent by its https base URL (https://agent.example.com); either allows that host.',
        }}
        action="Add"
        busyAction="Adding…"
        busy={save.busy}
        onSubmit={async (id) => {
          if (saved.outboundAllowed.includes(id)) return true;
          return (await setAllowed([...saved.outboundAllowed, id])) !== undefined;
        }}
      />

      <h3 className="subhead">Today, per agent called</h3>
      <OutboundBudgets api={api} />

      <h3 className="subhead">Credentials for A2A agents</h3>
      <OutboundCredentials api={api} />
    </Card>
  );
}
