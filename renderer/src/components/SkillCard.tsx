/**
 * One skill on the Skills page: what callers see of it (name, description, examples), the agent it runs on,
 * its tool class with the tools and the sandbox behind it, who may call it, its limits and budget, its use
 * today, whether it serves (and if not, why and the fix), and how a caller reaches it (its SAMVAD skill id,
 * its A2A card). The built-in chat is changed in Settings, never here.
 */
import { useId } from 'react';
import type { SkillAgentCheck, SkillView } from '../api/contract';
import { sectionHref } from '../pages/types';
import { a2aBase, AUDIENCE_TITLES, CLASS_LABELS, CLASS_TONES, needsAcceptance } from '../lib/skills';
import { formatCount, formatDateTime } from '../lib/format';
import { Address } from './Address';
import { Badge } from './Badge';
import { Field } from './Card';
import { CopyButton } from './CopyButton';
import { ErrorNotice, Notice } from './States';
import type { ApiRequestError } from '../api/client';

interface SkillCardProps {
  view: SkillView;
  /** An action on this skill is running. */
  busy: boolean;
  /** The last action on this skill failed: why. */
  error: ApiRequestError | null;
  onEdit: () => void;
  onPause: (paused: boolean) => void;
  onRemove: () => void;
  onAccept: () => void;
}

export function SkillCard({ view, busy, error, onEdit, onPause, onRemove, onAccept }: SkillCardProps) {
  const { setting, tools, serving } = view;
  const titleId = useId();
  const state = setting.paused ? 'paused' : serving.serving ? 'serving' : 'not-serving';
  return (
    <section
      className={`card skill-card ${state}`}
      aria-labelledby={titleId}
      data-testid="skill-card"
      data-skill={setting.id}
      data-class={tools.class}
      data-state={state}
    >
      <header className="card-header">
        <h2 id={titleId}>
          {setting.name} <span className="muted skill-id-note">({setting.id})</span>
        </h2>
        <div className="card-aside badges">
          {view.builtIn ? <Badge tone="neutral">built in</Badge> : null}
          <Badge tone={state === 'serving' ? 'ok' : state === 'paused' ? 'neutral' : 'bad'}>
            {state === 'serving' ? 'serving' : state === 'paused' ? 'paused' : 'not serving'}
          </Badge>
        </div>
      </header>
      <div className="card-body">
        <p className="skill-description">{setting.description}</p>
        {setting.examples.length > 0 ? (
          <ul className="skill-examples" aria-label={`Examples of ${setting.name}`}>
            {setting.examples.map((example) => (
              <li key={example}>“{example}”</li>
            ))}
          </ul>
        ) : null}
        {!serving.serving && !setting.paused ? (
          <Notice
            tone="error"
            title="Callers are refused"
            message={serving.message}
            fix={serving.fix}
            testId="skill-not-serving"
          />
        ) : null}
        <dl className="fields compact">
          <Field label="Agent">
            <span className="skill-agent">
              <code>{view.agent.model}</code> <AgentCheckBadge check={view.agent} />
            </span>
          </Field>
          <Field label="Tools">
            <div className="skill-stack">
              <span className="skill-class" data-testid="skill-class" data-class={tools.class}>
                <Badge tone={CLASS_TONES[tools.class]}>{tools.class}</Badge> {CLASS_LABELS[tools.class]}
              </span>
              {tools.tools.length > 0 ? (
                <span className="tool-list" data-testid="skill-tools">
                  {tools.tools.map((tool) => (
                    <code key={tool}>{tool}</code>
                  ))}
                </span>
              ) : null}
              {tools.sandbox ? (
                <span className="hint skill-sandbox" data-testid="skill-sandbox">
                  Sandbox: mode “{tools.sandbox.mode}”, workspace access “{tools.sandbox.workspaceAccess}”,
                  network “{tools.sandbox.network}”
                </span>
              ) : null}
              <details className="skill-detail">
                <summary>Why {tools.class}</summary>
                <p className="hint">{tools.detail}</p>
              </details>
            </div>
          </Field>
          <Field label="Audience">
            {AUDIENCE_TITLES[setting.audience]} <span className="muted">(tools up to {view.widest})</span>
          </Field>
          {view.acceptance ? (
            <Field label="Your acceptance">
              <Acceptance view={view} />
            </Field>
          ) : null}
          <Field label="Limits">
            {formatCount(view.limits.requestsPerMinute)} requests a minute per caller
            {setting.limits.requestsPerMinute === undefined ? (
              <span className="muted"> (default)</span>
            ) : null}
          </Field>
          <Field label="Budget">
            {formatCount(view.limits.tokensPerDay)} tokens a day per caller
            {setting.limits.tokensPerDay === undefined ? <span className="muted"> (default)</span> : null}
          </Field>
          <Field label="Today">
            <span data-testid="skill-today">
              {formatCount(view.today.calls)} call{view.today.calls === 1 ? '' : 's'},{' '}
              {formatCount(view.today.tokens)} tokens
            </span>
          </Field>
        </dl>
        <Reach view={view} />
        {error ? <ErrorNotice error={error} title={`Skill “${setting.id}” was not changed`} /> : null}
        <div className="actions">
          {view.builtIn ? (
            <>
              <a className="button small" href={sectionHref('settings', 'gateway')}>
                Change in Settings
              </a>
              <span className="hint">
                Chat runs on the agent for callers (Settings → Gateway); it cannot be paused or removed.
              </span>
            </>
          ) : (
            <>
              {needsAcceptance(view) ? (
                <button
                  type="button"
                  className="button small danger"
                  disabled={busy}
                  onClick={onAccept}
                  aria-label={`Accept the tools of ${setting.id}…`}
                >
                  Accept its tools…
                </button>
              ) : null}
              <button
                type="button"
                className="button small"
                disabled={busy}
                onClick={onEdit}
                aria-label={`Edit ${setting.id}`}
              >
                Edit
              </button>
              <button
                type="button"
                className="button small"
                disabled={busy}
                onClick={() => onPause(!setting.paused)}
                aria-label={`${setting.paused ? 'Resume' : 'Pause'} ${setting.id}`}
              >
                {setting.paused ? 'Resume' : 'Pause'}
              </button>
              <button
                type="button"
                className="button small danger-ghost"
                disabled={busy}
                onClick={onRemove}
                aria-label={`Remove ${setting.id}…`}
              >
                Remove…
              </button>
            </>
          )}
        </div>
      </div>
    </section>
  );
}

function AgentCheckBadge({ check }: { check: SkillAgentCheck }) {
  switch (check.check) {
    case 'present':
      return <Badge tone="ok">on the gateway</Badge>;
    case 'missing':
      return <Badge tone="bad">missing</Badge>;
    case 'unknown':
      return (
        <span title={check.detail}>
          <Badge tone="warn">not confirmed</Badge>
        </span>
      );
    case 'checking':
      return <Badge tone="neutral">checking</Badge>;
  }
}

function Acceptance({ view }: { view: SkillView }) {
  const acceptance = view.acceptance;
  if (!acceptance) return null;
  if (acceptance.state === 'accepted')
    return (
      <span data-testid="skill-acceptance" data-state="accepted">
        accepted {formatDateTime(acceptance.at)}, with exactly these tools
      </span>
    );
  if (acceptance.state === 'changed')
    return (
      <span data-testid="skill-acceptance" data-state="changed">
        you accepted {acceptance.tools.join(', ') || 'no tools'} on {formatDateTime(acceptance.at)}; its tools
        changed since
      </span>
    );
  return (
    <span data-testid="skill-acceptance" data-state="needed">
      not accepted yet
    </span>
  );
}

/** How a caller reaches the skill: over SAMVAD by its id in the envelope, over A2A by its own card. */
function Reach({ view }: { view: SkillView }) {
  const { setting } = view;
  return (
    <div className="skill-reach" data-testid="skill-reach">
      <h3 className="subhead">How callers reach it</h3>
      <dl className="fields compact">
        <Field label="SAMVAD skill">
          <div className="skill-stack">
            <span className="copyable">
              <code data-testid="skill-samvad-id">{setting.id}</code>
              <CopyButton value={setting.id} label={`Copy the SAMVAD skill id ${setting.id}`} />
            </span>
            <span className="hint">the envelope’s “skill”</span>
          </div>
        </Field>
        <Field label="A2A card">
          {view.a2aCardUrl ? (
            <div className="skill-stack">
              <span className="copyable">
                <Address value={view.a2aCardUrl} testId="skill-card-url" />
                <CopyButton value={view.a2aCardUrl} label={`Copy the A2A card URL of ${setting.id}`} />
              </span>
              <span className="hint">
                {view.builtIn
                  ? 'the agent’s own card'
                  : `the SDK’s client: createFromUrl("${a2aBase(view.a2aCardUrl)}")`}
              </span>
            </div>
          ) : (
            <span className="muted" data-testid="skill-card-url-none">
              {setting.paused
                ? 'none while it is paused (callers are told there is no such skill)'
                : 'none until the agent has a public address (start the tunnel)'}
            </span>
          )}
        </Field>
      </dl>
    </div>
  );
}
