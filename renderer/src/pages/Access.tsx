/**
 * Who may reach the gateway agent: the access policy (OpenClaw's own words: pairing, allowlist, open), the
 * senders waiting for the operator's approval, the approved ones (each with the skills it may call), and the
 * A2A keys; and whom the operator's agent may call. Callers in on the left, calls out on the right, the keys' table under both (wide screens);
 * a section nav jumps to each. Reloads whenever the core says the lists changed (`data.accessVersion`).
 */
import { useCallback, useId, useRef, useState } from 'react';
import type {
  AccessChangeResponse,
  AccessPolicy,
  AccessResponse,
  ApprovedSenderView,
  PendingSenderView,
} from '../api/contract';
import { A2AKeysCard } from '../components/A2AKeysCard';
import { KnocksCard } from '../components/KnocksCard';
import { OpenAccessWarning } from '../components/AccessNotices';
import { CallsOutCard } from '../components/CallsOutCard';
import { Address } from '../components/Address';
import { AgentIdForm } from '../components/AgentIdForm';
import { PolicyChoice } from '../components/PolicyChoice';
import { ScopeDialog, type ScopeQuestion } from '../components/ScopeDialog';
import { scopeProblem, SkillScope } from '../components/SkillScope';
import { SectionNav } from '../components/SectionNav';
import { Badge } from '../components/Badge';
import { Card, Field } from '../components/Card';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { agentName } from '../components/GatewayAgent';
import { EmptyState, ErrorNotice, Loading, Notice } from '../components/States';
import { When } from '../components/When';
import { asApiError, useAction } from '../hooks/useAction';
import { useLoaded } from '../hooks/useLoaded';
import { useNow } from '../hooks/useNow';
import { useSectionJump } from '../hooks/useSectionJump';
import { useSkills } from '../hooks/useSkills';
import { formatDateTime } from '../lib/format';
import { scopeText } from '../lib/skills';
import { sectionHref, type PageProps } from './types';

export const POLICIES: readonly { value: AccessPolicy; title: string; text: string }[] = [
  {
    value: 'pairing',
    title: 'Pairing (recommended)',
    text: 'A sender that calls for the first time waits here with a request code until you approve it; its calls are refused meanwhile (async tasks are held). Once approved, its calls go through.',
  },
  {
    value: 'allowlist',
    title: 'Allowlist',
    text: 'Only senders you approved and the allowed peers in Settings get through. Anyone else is refused and does not show up here: approve an agent id in advance below.',
  },
  {
    value: 'open',
    title: 'Open',
    text: 'Any agent with a valid signature reaches your gateway agent, without asking you. Only the rate limits stand between a stranger and that agent.',
  },
];

// The agent id form of PROTOCOL.md §1 (as the core checks it): agent://host[:port] or agent://[v6][:port].

type Decision =
  /** `skills`: exactly those (none: every public and approved skill); `rescope`: an approved sender's. */
  | { kind: 'approve'; sender: string; inAdvance?: boolean; skills?: string[]; rescope?: boolean }
  | { kind: 'deny'; sender: string; heldTasks: number; until: string }
  | { kind: 'revoke'; sender: string };

export function Access({ api, data }: PageProps) {
  const { accessVersion, refreshStatus, status } = data;
  // Only the newest answer is shown: a slow load must not undo a decision made meanwhile.
  const fetchAccess = useCallback(() => api.access(), [api]);
  const { view, loadError, show, load } = useLoaded<AccessResponse>(fetchAccess, [accessVersion]);
  const [confirming, setConfirming] = useState<Decision | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  /** The decision being made or last made: which row is busy, where its error shows. */
  const [active, setActive] = useState<Decision | null>(null);
  const [scoping, setScoping] = useState<ScopeQuestion | null>(null);
  const [advanceScope, setAdvanceScope] = useState<string[] | undefined>(undefined);
  const [advanceScopeTried, setAdvanceScopeTried] = useState(false);
  const now = useNow(30_000);
  // What a key or an approval may be scoped to.
  const skills = useSkills(api, data.skillsVersion).view?.skills;

  useSectionJump(view !== null);

  const apply = useCallback(
    (response: AccessChangeResponse) => {
      show(response);
      // The tab's count and the Overview's notice.
      void refreshStatus();
    },
    [show, refreshStatus],
  );

  const target = useRef<Decision | null>(null);
  const decide = useAction(async () => {
    const decision = target.current;
    if (!decision) return undefined;
    try {
      const response =
        decision.kind === 'approve'
          ? await api.approveSender(decision.sender, decision.skills)
          : decision.kind === 'deny'
            ? await api.denySender(decision.sender)
            : await api.revokeSender(decision.sender);
      apply(response);
      return { decision, tasks: response.tasks };
    } catch (error) {
      // Not waiting or not approved (any more): it expired, or was decided in another window. Show what is.
      if (asApiError(error).status === 404) void load();
      throw error;
    }
  });

  const run = async (decision: Decision) => {
    target.current = decision;
    setActive(decision);
    setOutcome(null);
    const done = await decide.run();
    if (!done) return false;
    setConfirming(null);
    setScoping(null);
    setOutcome(describeOutcome(done.decision, done.tasks));
    return true;
  };

  const ask = (decision: Decision) => {
    decide.reset();
    setOutcome(null);
    setConfirming(decision);
  };
  const askScope = (question: ScopeQuestion) => {
    decide.reset();
    setOutcome(null);
    setScoping(question);
  };

  if (!view) {
    return (
      <div className="page access" data-testid="access-page">
        <h1 className="visually-hidden">Access</h1>
        {loadError ? (
          <>
            <ErrorNotice error={loadError} title="Cannot load the access lists" />
            <div className="actions">
              <button type="button" className="button" onClick={() => void load()}>
                Retry
              </button>
            </div>
          </>
        ) : (
          <Loading label="Loading the access lists…" />
        )}
      </div>
    );
  }

  const agent = status ? agentName(status.gateway.agent) : undefined;
  const busySender = decide.busy ? active?.sender : undefined;
  const approving = active?.kind === 'approve' ? active : null;
  // A dialog's own error shows in it; a one-click approval's on the list.
  const rowError = decide.error && approving && !approving.inAdvance && !scoping ? decide.error : null;
  const advanceError = decide.error && approving?.inAdvance ? decide.error : null;
  return (
    <div className="page access" data-testid="access-page">
      <h1 className="visually-hidden">Access</h1>
      {view.policy === 'open' ? <OpenAccessWarning agent={agent} /> : null}
      {loadError ? <ErrorNotice error={loadError} title="Showing the last known lists" /> : null}

      <SectionNav
        page="access"
        label="Access sections"
        sections={[
          { id: 'policy', title: 'Who may reach your agent' },
          { id: 'waiting', title: 'Waiting', count: view.pending.length },
          { id: 'knocks', title: 'A2A knocks', count: status?.access.knocks?.waiting ?? 0 },
          { id: 'approved', title: 'Approved senders' },
          { id: 'calls-out', title: 'Calls out' },
          { id: 'a2a-keys', title: 'A2A keys' },
        ]}
      />

      <div className="page-columns">
        <div className="page-column">
          <div data-section="policy">
            <PolicyCard
              api={api}
              policy={view.policy}
              onSaved={async () => {
                await load();
                await refreshStatus();
              }}
            />
          </div>

          <div data-section="waiting">
            <Card
              title="Waiting for your approval"
              testId="pending-senders"
              help={{ to: 'docs/security.md#your-consent-for-new-senders', topic: 'approving senders' }}
              aside={<Badge tone={view.pending.length > 0 ? 'warn' : 'neutral'}>{view.pending.length}</Badge>}
            >
              <p className="muted small" data-testid="access-limits">
                Up to {view.limits.maxPending} senders can wait at once, each with up to{' '}
                {view.limits.maxHeldPerSender} held tasks. A request expires {view.limits.expiryHours} h after
                the sender first asked, and its held tasks fail then (
                <a href={sectionHref('settings', 'access')}>change the expiry in Settings → Access</a>).
              </p>
              {view.refusedWhileFull > 0 ? (
                <Notice
                  tone="warning"
                  title={`${view.refusedWhileFull} new sender${view.refusedWhileFull === 1 ? ' was' : 's were'} turned away`}
                  message={`Since the agent started, the waiting list was full (${view.limits.maxPending} senders) when they asked. Approve or deny requests to make room; they were told to retry later.`}
                  testId="refused-while-full"
                />
              ) : null}
              {view.policy !== 'pairing' && view.pending.length > 0 ? (
                <Notice
                  tone="info"
                  message={`The policy is ${view.policy}: no new sender joins this list. These requests are from before; you can still decide them.`}
                />
              ) : null}
              {outcome ? <Notice tone="success" message={outcome} testId="access-result" /> : null}
              {rowError ? (
                <ErrorNotice
                  error={rowError}
                  title={`Could not approve ${approving?.sender ?? 'the sender'}`}
                />
              ) : null}
              {view.pending.length === 0 ? (
                <EmptyState title="No one is waiting">
                  {view.policy === 'pairing' ? (
                    <p>
                      With pairing, an agent that calls for the first time is not forwarded to your gateway:
                      it shows up here with a request code (the caller is told that code, so it can tell you
                      which request is theirs), and you approve it once or deny it. Its later calls then go
                      straight through.
                    </p>
                  ) : (
                    <p>
                      With the policy {view.policy}, no one waits for approval. Choose pairing above to decide
                      on each new sender yourself.
                    </p>
                  )}
                </EmptyState>
              ) : (
                <>
                  <p className="muted small">
                    Names and descriptions come from each sender’s own card: anyone can claim any name. Judge
                    a request by its agent id and by whether you expected it.
                  </p>
                  <ul className="pending-list">
                    {view.pending.map((pending) => (
                      <PendingRow
                        key={pending.sender}
                        pending={pending}
                        maxHeld={view.limits.maxHeldPerSender}
                        now={now}
                        busy={busySender === pending.sender}
                        disabled={decide.busy}
                        onApprove={() => void run({ kind: 'approve', sender: pending.sender })}
                        onApproveSome={() =>
                          askScope({ sender: pending.sender, kind: 'approve', current: undefined })
                        }
                        onDeny={() =>
                          ask({
                            kind: 'deny',
                            sender: pending.sender,
                            heldTasks: pending.heldTasks,
                            until: pending.expiresAt,
                          })
                        }
                      />
                    ))}
                  </ul>
                </>
              )}
            </Card>
          </div>

          <div data-section="knocks">
            <KnocksCard api={api} version={accessVersion} />
          </div>

          <div data-section="approved">
            <Card
              title="Approved senders"
              testId="approved-senders"
              aside={<Badge tone="neutral">{view.approved.length}</Badge>}
            >
              {view.approved.length === 0 ? (
                <EmptyState title="No approved senders yet">
                  <p>Senders you approve (and the allowed peers from Settings) are listed here.</p>
                </EmptyState>
              ) : (
                <ApprovedTable
                  approved={view.approved}
                  now={now}
                  disabled={decide.busy}
                  onRevoke={(sender) => ask({ kind: 'revoke', sender })}
                  onScope={(sender) =>
                    askScope({ sender: sender.sender, kind: 'change', current: sender.skills })
                  }
                />
              )}
              <AgentIdForm
                label="Approve an agent in advance"
                placeholder="agent://friend.example.com"
                action="Approve"
                busyAction="Approving…"
                help="Its calls go through from the first one, under pairing and allowlist alike."
                busy={decide.busy && approving?.inAdvance === true}
                error={advanceError}
                onSubmit={async (sender) => {
                  setAdvanceScopeTried(true);
                  if (scopeProblem(advanceScope)) return false;
                  const done = await run({
                    kind: 'approve',
                    sender,
                    inAdvance: true,
                    ...(advanceScope ? { skills: advanceScope } : {}),
                  });
                  if (done) {
                    setAdvanceScope(undefined);
                    setAdvanceScopeTried(false);
                  }
                  return done;
                }}
              >
                <SkillScope
                  legend="Skills it may call"
                  skills={skills}
                  value={advanceScope}
                  error={advanceScopeTried ? scopeProblem(advanceScope) : undefined}
                  onChange={(next) => {
                    setAdvanceScope(next);
                    setAdvanceScopeTried(false);
                  }}
                />
              </AgentIdForm>
            </Card>
          </div>
        </div>

        <div className="page-column">
          <div data-section="calls-out">
            <CallsOutCard api={api} onSaved={refreshStatus} />
          </div>
        </div>
      </div>

      {/* Its table needs the page's width: under both columns. */}
      <div data-section="a2a-keys">
        <A2AKeysCard
          api={api}
          version={accessVersion}
          policy={view.policy}
          traffic={data.traffic.entries}
          skills={skills}
        />
      </div>

      <ScopeDialog
        question={scoping}
        skills={skills}
        busy={decide.busy}
        error={scoping ? decide.error : null}
        onCancel={() => setScoping(null)}
        onConfirm={(sender, scope) =>
          void run({
            kind: 'approve',
            sender,
            ...(scope ? { skills: scope } : {}),
            rescope: scoping?.kind === 'change',
          })
        }
      />

      <ConfirmDialog
        open={confirming?.kind === 'deny'}
        title={confirming ? `Deny ${confirming.sender}?` : 'Deny?'}
        confirmLabel="Deny"
        tone="danger"
        busy={decide.busy}
        onCancel={() => setConfirming(null)}
        onConfirm={() => {
          if (confirming) void run(confirming);
        }}
      >
        {confirming?.kind === 'deny' ? (
          <>
            {confirming.heldTasks > 0 ? (
              <p>
                <strong>
                  Its {confirming.heldTasks} held task{confirming.heldTasks === 1 ? '' : 's'} fail
                  {confirming.heldTasks === 1 ? 's' : ''} now
                </strong>
                , and the caller is told that you declined.
              </p>
            ) : null}
            <p>
              It is refused until {formatDateTime(confirming.until)}, when its request would have expired;
              after that it may ask again. To let it in later, approve its id on this page.
            </p>
          </>
        ) : null}
        {decide.error ? <ErrorNotice error={decide.error} title="Not denied" /> : null}
      </ConfirmDialog>

      <ConfirmDialog
        open={confirming?.kind === 'revoke'}
        title={confirming ? `Revoke ${confirming.sender}?` : 'Revoke?'}
        confirmLabel="Revoke"
        tone="danger"
        busy={decide.busy}
        onCancel={() => setConfirming(null)}
        onConfirm={() => {
          if (confirming) void run(confirming);
        }}
      >
        <p>{revokeConsequence(view.policy)}</p>
        {decide.error ? <ErrorNotice error={decide.error} title="Not revoked" /> : null}
      </ConfirmDialog>
    </div>
  );
}

function describeOutcome(decision: Decision, tasks: number): string {
  const plural = (n: number) => `${n} held task${n === 1 ? '' : 's'}`;
  switch (decision.kind) {
    case 'approve': {
      const to = decision.skills ? ` to ${scopeText(decision.skills)}` : '';
      if (decision.rescope)
        return `${decision.sender} may call ${scopeText(decision.skills)} from its next call on.`;
      return decision.inAdvance
        ? `Approved ${decision.sender} in advance: its calls${to} go through from the first one.`
        : `Approved ${decision.sender}: its calls${to} go through from now on.${tasks > 0 ? ` Its ${plural(tasks)} started.` : ''}`;
    }
    case 'deny':
      return `Denied ${decision.sender}.${tasks > 0 ? ` Its ${plural(tasks)} failed.` : ''} It is refused until ${formatDateTime(decision.until)}.`;
    case 'revoke':
      return `Revoked ${decision.sender}: it is a new sender again.`;
  }
}

function revokeConsequence(policy: AccessPolicy): string {
  switch (policy) {
    case 'pairing':
      return 'Its calls stop going through: its next call puts it back on the waiting list, and you decide again.';
    case 'allowlist':
      return 'Its calls are refused from now on, until you approve it again.';
    case 'open':
      return 'The policy is open, so its calls still go through, as any verified sender’s do; the approval matters again once you choose pairing or allowlist.';
  }
}

interface PendingRowProps {
  pending: PendingSenderView;
  maxHeld: number;
  now: number;
  busy: boolean;
  disabled: boolean;
  onApprove: () => void;
  /** Approve it for some skills only (asked in a dialog). */
  onApproveSome: () => void;
  onDeny: () => void;
}

function PendingRow(props: PendingRowProps) {
  const { pending, maxHeld, now, busy, disabled, onApprove, onApproveSome, onDeny } = props;
  const headingId = useId();
  return (
    <li
      className="pending-row"
      data-testid="pending-row"
      data-sender={pending.sender}
      aria-labelledby={headingId}
    >
      <div className="pending-head">
        <div className="pending-who">
          <h3 id={headingId} className="pending-name">
            {pending.name ? (
              <>
                “{pending.name}” <span className="muted small">(name on its card, self-declared)</span>
              </>
            ) : (
              <span className="muted">No name: its card was not fetched or has none</span>
            )}
          </h3>
          <span className="copyable">
            <Address value={pending.sender} />
            <CopyButton value={pending.sender} label={`Copy ${pending.sender}`} />
          </span>
        </div>
        <div className="pending-code">
          Request <code className="code-chip">{pending.code}</code>
        </div>
      </div>
      {pending.description ? (
        <p className="pending-description">
          <span className="muted small">Card description (self-declared, unverified): </span>
          {pending.description}
        </p>
      ) : null}
      <dl className="fields compact">
        <Field label="First asked">
          <When iso={pending.firstAt} now={now} past />
        </Field>
        <Field label="Last asked">
          <When iso={pending.lastAt} now={now} past />
        </Field>
        <Field label="Times asked">{pending.count}</Field>
        <Field label="Held tasks">
          {pending.heldTasks}
          <span className="muted"> (at most {maxHeld})</span>
        </Field>
        <Field label="Expires">
          <When iso={pending.expiresAt} now={now} />
        </Field>
      </dl>
      {pending.note ? (
        <Notice tone="warning" title="Asks again" message={`It was ${pending.note}.`} testId="pending-note" />
      ) : null}
      {pending.preview !== undefined ? (
        <div>
          <p className="preview-label">
            Its first message, as sent: untrusted text from an unknown agent. Do not act on instructions in
            it.
          </p>
          <pre className="preview" data-testid="pending-preview">
            {pending.preview}
          </pre>
        </div>
      ) : null}
      <div className="actions">
        <button
          type="button"
          className="button primary"
          data-testid="approve-button"
          aria-label={`Approve ${pending.sender}`}
          disabled={disabled}
          onClick={onApprove}
        >
          {busy ? 'Approving…' : 'Approve'}
        </button>
        <button
          type="button"
          className="button"
          aria-label={`Approve ${pending.sender} for some skills…`}
          disabled={disabled}
          onClick={onApproveSome}
        >
          For some skills…
        </button>
        <button
          type="button"
          className="button danger-ghost"
          data-testid="deny-button"
          aria-label={`Deny ${pending.sender}`}
          disabled={disabled}
          onClick={onDeny}
        >
          Deny…
        </button>
      </div>
    </li>
  );
}

interface ApprovedTableProps {
  approved: ApprovedSenderView[];
  now: number;
  disabled: boolean;
  onRevoke: (sender: string) => void;
  /** Change the skills it may call (asked in a dialog). */
  onScope: (sender: ApprovedSenderView) => void;
}

function ApprovedTable({ approved, now, disabled, onRevoke, onScope }: ApprovedTableProps) {
  return (
    <table className="table approved-table">
      <thead>
        <tr>
          <th scope="col">Agent id</th>
          <th scope="col">Name</th>
          <th scope="col">Approved</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {approved.map((sender) => (
          <tr
            key={`${sender.source}:${sender.sender}`}
            data-testid="approved-row"
            data-sender={sender.sender}
            data-source={sender.source}
          >
            <th scope="row">
              <span className="copyable">
                <Address value={sender.sender} />
                <CopyButton value={sender.sender} label={`Copy ${sender.sender}`} />
              </span>
              <span className="approved-scope small">
                <span className="muted">Skills: </span>
                <span className="scope-text" data-testid="approved-skills">
                  {scopeText(sender.skills)}
                </span>
              </span>
            </th>
            <td>{sender.name ? `“${sender.name}”` : <span className="muted">—</span>}</td>
            <td>
              {sender.source === 'operator' ? (
                sender.approvedAt ? (
                  <>
                    by you, <When iso={sender.approvedAt} now={now} past />
                  </>
                ) : (
                  'by you'
                )
              ) : (
                <Badge tone="info">allowed peers setting</Badge>
              )}
            </td>
            <td className="row-actions">
              {sender.source === 'operator' ? (
                <>
                  <button
                    type="button"
                    className="button small"
                    aria-label={`Skills ${sender.sender} may call…`}
                    disabled={disabled}
                    onClick={() => onScope(sender)}
                  >
                    Skills…
                  </button>
                  <button
                    type="button"
                    className="button small danger-ghost"
                    data-testid="revoke-button"
                    aria-label={`Revoke ${sender.sender}`}
                    disabled={disabled}
                    onClick={() => onRevoke(sender.sender)}
                  >
                    Revoke…
                  </button>
                </>
              ) : (
                <a className="button small ghost" href={sectionHref('settings', 'access')}>
                  Change in Settings
                </a>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

interface PolicyCardProps {
  api: PageProps['api'];
  policy: AccessPolicy;
  onSaved: () => Promise<void>;
}

function PolicyCard({ api, policy, onSaved }: PolicyCardProps) {
  // null: follow the saved policy (it may change from elsewhere while this page is open).
  const [choice, setChoice] = useState<AccessPolicy | null>(null);
  const selected = choice ?? policy;
  const name = useId();
  const save = useAction(async () => {
    await api.updateSettings({ access: selected });
    setChoice(null);
    await onSaved();
    return selected;
  });
  const changed = selected !== policy;
  return (
    <Card
      title="Who may reach your gateway agent"
      testId="access-policy"
      help={{
        to: 'docs/security.md#your-consent-for-new-senders',
        topic: 'pairing, the allowlist and open access',
      }}
    >
      <form
        className="policy-form"
        data-policy={policy}
        onSubmit={(event) => {
          event.preventDefault();
          void save.run();
        }}
      >
        <PolicyChoice
          name={name}
          legend="Access policy"
          options={POLICIES}
          selected={selected}
          current={policy}
          testIdPrefix="policy"
          onChoose={(value) => {
            save.reset();
            setChoice(value);
          }}
        />
        {changed && selected === 'open' ? (
          <Notice
            tone="warning"
            message="Saving this lets any agent that can sign an envelope reach your gateway agent without asking you. Do it only if that agent is restricted (no shell, no files)."
          />
        ) : null}
        {save.error ? <ErrorNotice error={save.error} title="Policy not saved" /> : null}
        <div className="actions">
          <button type="submit" className="button primary" disabled={!changed || save.busy}>
            {save.busy ? 'Saving…' : 'Save policy'}
          </button>
          {changed ? (
            <button type="button" className="button" onClick={() => setChoice(null)} disabled={save.busy}>
              Discard
            </button>
          ) : null}
          {save.result && !changed ? (
            <span className="muted small" role="status">
              Saved: the policy is {save.result} now.
            </span>
          ) : null}
        </div>
      </form>
    </Card>
  );
}
