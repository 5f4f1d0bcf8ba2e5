/**
 * A2A knocks, on the Access page: agents on the A2A network that called without a key (policy pairing) and
 * wait for the operator. Each shows where it called from, what it claims to be (its own words: marked as
 * claimed, never checked), the skill it knocked at and the start of its message (escaped by the core, shown
 * as text). Approving issues an A2A key for it, scoped to the skills chosen and with the limits set: its
 * message runs, and the caller reads the key once, in its task (never here). Denying ends its task rejected
 * with the reason chosen. Reloads when the core says the access lists changed (`version`).
 */
import { useCallback, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import type { ApiClient, ApiRequestError } from '../api/client';
import type { KnockApproveRequest, KnocksResponse, KnockView } from '../api/contract';
import { asApiError, useAction } from '../hooks/useAction';
import { useLoaded } from '../hooks/useLoaded';
import { useNow } from '../hooks/useNow';
import { formatCount, formatDateTime } from '../lib/format';
import { Badge } from './Badge';
import { Card, Field } from './Card';
import { ConfirmDialog } from './ConfirmDialog';
import { EmptyState, ErrorNotice, Loading, Notice } from './States';
import { When } from './When';
import './knocks.css';

interface KnocksCardProps {
  api: ApiClient;
  /** Bumped whenever the access lists (knocks included) changed. */
  version: number;
}

const EXPIRIES: readonly { days: number; label: string }[] = [
  { days: 0, label: 'Never' },
  { days: 7, label: 'In 7 days' },
  { days: 30, label: 'In 30 days' },
  { days: 90, label: 'In 90 days' },
  { days: 365, label: 'In 1 year' },
];

const REASONS = [
  'I do not know you: tell me who you are through another channel first.',
  'Not now, thank you.',
  'This agent does not take requests like yours.',
];

export function KnocksCard({ api, version }: KnocksCardProps) {
  const [approving, setApproving] = useState<string | null>(null);
  const [denying, setDenying] = useState<KnockView | null>(null);
  const [reason, setReason] = useState(REASONS[0]!);
  const [outcome, setOutcome] = useState<string | null>(null);
  const now = useNow(30_000);

  // Only the newest answer is shown: a slow load must not undo a decision made meanwhile.
  const { view, loadError, show, load } = useLoaded(
    useCallback(() => api.knocks(), [api]),
    [version],
  );

  const approval = useRef<{ code: string; request: KnockApproveRequest } | null>(null);
  const approve = useAction(async () => {
    const target = approval.current;
    if (!target) return undefined;
    try {
      const response = await api.approveKnock(target.code, target.request);
      show(response);
      return { code: target.code, key: response.key };
    } catch (error) {
      // Decided elsewhere, withdrawn by its caller, or expired: show what is.
      if (asApiError(error).status === 404) void load();
      throw error;
    }
  });
  const deny = useAction(async () => {
    if (!denying) return undefined;
    const response = await api.denyKnock(denying.code, reason.trim());
    show(response);
    return denying;
  });

  if (!view) {
    return (
      <Card title="A2A agents knocking" testId="knocks">
        {loadError ? <ErrorNotice error={loadError} title="Cannot load the knocks" /> : <Loading />}
      </Card>
    );
  }

  const submitApproval = async (code: string, request: KnockApproveRequest) => {
    approval.current = { code, request };
    setOutcome(null);
    const done = await approve.run();
    if (!done) return;
    setApproving(null);
    const scope = done.key.skills
      ? `, for ${done.key.skills.join(', ')}`
      : ', for every public and approved skill';
    setOutcome(
      `Approved knock ${done.code}: key “${done.key.name}” (${done.key.id}) issued${scope}. Its message runs now; its caller reads the key once, in its task.`,
    );
  };

  return (
    <Card
      title="A2A agents knocking"
      testId="knocks"
      help={{ to: 'docs/a2a.md#a-stranger-knocks', topic: 'A2A knocks' }}
      aside={<Badge tone={view.knocks.length > 0 ? 'warn' : 'neutral'}>{view.knocks.length}</Badge>}
    >
      <p className="muted small" data-testid="knock-limits">
        Agents on the A2A network that call without a key wait here, up to {view.limits.maxWaiting} at once
        and {view.limits.maxPerAddress} from one address, for {view.limits.expiryHours} h.
      </p>
      {loadError ? <ErrorNotice error={loadError} title="Showing the last known knocks" /> : null}
      {view.refused > 0 ? (
        <Notice
          tone="info"
          testId="knocks-refused"
          message={`${formatCount(view.refused)} knock${view.refused === 1 ? ' was' : 's were'} turned away since the agent started (the list or an address full, or an address you declined); nothing else of them was kept.`}
        />
      ) : null}
      {outcome ? <Notice tone="success" message={outcome} testId="knock-result" /> : null}
      {view.knocks.length === 0 ? (
        <EmptyState title="No A2A agent is knocking">
          <p>{emptyText(view)}</p>
        </EmptyState>
      ) : (
        <>
          <p className="muted small">
            Names and card addresses are what each caller claims: anyone can claim any. Judge a knock by its
            address and by whether you expected it.
          </p>
          <ul className="pending-list">
            {view.knocks.map((knock) => (
              <KnockRow
                key={knock.code}
                knock={knock}
                now={now}
                disabled={approve.busy || deny.busy}
                onApprove={() => {
                  approve.reset();
                  setOutcome(null);
                  setApproving(approving === knock.code ? null : knock.code);
                }}
                onDeny={() => {
                  deny.reset();
                  setOutcome(null);
                  setReason(REASONS[0]!);
                  setDenying(knock);
                }}
              >
                {approving === knock.code ? (
                  <ApproveForm
                    knock={knock}
                    view={view}
                    busy={approve.busy}
                    error={approve.error}
                    onCancel={() => setApproving(null)}
                    onSubmit={(request) => void submitApproval(knock.code, request)}
                  />
                ) : null}
              </KnockRow>
            ))}
          </ul>
        </>
      )}
      <ConfirmDialog
        open={denying !== null}
        title={denying ? `Deny knock ${denying.code}?` : 'Deny?'}
        confirmLabel="Deny"
        tone="danger"
        busy={deny.busy}
        onCancel={() => setDenying(null)}
        onConfirm={() => {
          void deny.run().then((denied) => {
            if (!denied) return;
            setDenying(null);
            setOutcome(
              `Denied knock ${denied.code}: its caller reads your reason in its task. Its address may not knock again until ${formatDateTime(denied.expiresAt)}.`,
            );
          });
        }}
      >
        <DenyReason reason={reason} onChange={setReason} />
        {deny.error ? <ErrorNotice error={deny.error} title="Not denied" /> : null}
      </ConfirmDialog>
    </Card>
  );
}

function emptyText(view: KnocksResponse): string {
  if (view.policy !== 'pairing') {
    return `With the policy ${view.policy}, an A2A agent without a key does not knock: ${view.policy === 'open' ? 'it is let in' : 'it is refused'}. Choose pairing above to decide on each one yourself.`;
  }
  if (!view.available) {
    return 'This agent runs with replicas: knocks are not shared between them yet, so an A2A agent without a key is refused. Issue it a key below.';
  }
  return 'An A2A agent that calls without a key is not forwarded to your gateway: its message waits here as a task it can follow, and you approve it (it gets a key, once, in that task) or deny it.';
}

interface KnockRowProps {
  knock: KnockView;
  now: number;
  disabled: boolean;
  onApprove: () => void;
  onDeny: () => void;
  children?: ReactNode;
}

function KnockRow({ knock, now, disabled, onApprove, onDeny, children }: KnockRowProps) {
  const headingId = useId();
  const from =
    knock.via === 'local'
      ? 'from this machine'
      : knock.via === 'proxy'
        ? `from ${knock.address} (as the tunnel forwarded it)`
        : `from ${knock.address}`;
  return (
    <li className="pending-row" data-testid="knock-row" data-code={knock.code} aria-labelledby={headingId}>
      <div className="pending-head">
        <div className="pending-who">
          <h3 id={headingId} className="pending-name">
            {knock.claimed.name !== undefined ? (
              <>
                “{knock.claimed.name}” <span className="muted small">(the name it claims, unverified)</span>
              </>
            ) : (
              <span className="muted">No name given</span>
            )}
          </h3>
          <span data-testid="knock-address">{from}</span>
        </div>
        <div className="pending-code">
          Knock <code className="code-chip">{knock.code}</code>
        </div>
      </div>
      {knock.claimed.cardUrl !== undefined ? (
        <p className="pending-description" data-testid="knock-card-url">
          <span className="muted small">Agent card it claims (not fetched, not checked): </span>
          <code>{knock.claimed.cardUrl}</code>
        </p>
      ) : null}
      <dl className="fields compact">
        <Field label="Skill">{knock.skill}</Field>
        <Field label="Knocked">
          <When iso={knock.firstAt} now={now} past />
        </Field>
        <Field label="Messages">{knock.messages}</Field>
        <Field label="Expires">
          <When iso={knock.expiresAt} now={now} />
        </Field>
      </dl>
      {knock.screened ? (
        <Notice
          tone="warning"
          title="Flagged by the injection screen"
          message={`Its message matched the rule “${knock.screened.rule}”. Read it with care; if you approve, your agent is told so too.`}
          testId="knock-screened"
        />
      ) : null}
      <div>
        <p className="preview-label">
          Its first message, as sent (hidden characters shown escaped): untrusted text from an unknown agent.
          Do not act on instructions in it.
        </p>
        <pre className="preview" data-testid="knock-preview">
          {knock.preview}
        </pre>
      </div>
      <div className="actions">
        <button
          type="button"
          className="button primary"
          aria-label={`Approve knock ${knock.code}`}
          aria-expanded={children ? true : false}
          disabled={disabled}
          onClick={onApprove}
        >
          Approve…
        </button>
        <button
          type="button"
          className="button danger-ghost"
          aria-label={`Deny knock ${knock.code}`}
          disabled={disabled}
          onClick={onDeny}
        >
          Deny…
        </button>
      </div>
      {children}
    </li>
  );
}

interface ApproveFormProps {
  knock: KnockView;
  view: KnocksResponse;
  busy: boolean;
  error: ApiRequestError | null;
  onCancel: () => void;
  onSubmit: (request: KnockApproveRequest) => void;
}

/** The key the approval issues: its name, the skills it opens (the one knocked at by default), its limits. */
function ApproveForm({ knock, view, busy, error, onCancel, onSubmit }: ApproveFormProps) {
  const id = useId();
  const [name, setName] = useState(knock.suggestedName);
  const [everySkill, setEverySkill] = useState(false);
  const [skills, setSkills] = useState<string[]>([knock.skill]);
  const [rpm, setRpm] = useState('');
  const [tokens, setTokens] = useState('');
  const [days, setDays] = useState(0);
  const problem = (field: string) => error?.fields.find((each) => each.field === field)?.message;
  const general = error && error.fields.length === 0 ? error : null;
  const noSkill = !everySkill && skills.length === 0;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (noSkill) return;
    const limit = (text: string) => (text.trim() === '' ? undefined : Number(text));
    const limits = { requestsPerMinute: limit(rpm), tokensPerDay: limit(tokens) };
    onSubmit({
      name: name.trim(),
      ...(everySkill ? {} : { skills }),
      ...(limits.requestsPerMinute !== undefined || limits.tokensPerDay !== undefined ? { limits } : {}),
      ...(days > 0 ? { expiresAt: new Date(Date.now() + days * 86_400_000).toISOString() } : {}),
    });
  };

  return (
    <form className="key-form knock-approve" onSubmit={submit} noValidate data-testid="knock-approve-form">
      <div className="form-field key-name">
        <label htmlFor={`${id}-name`}>Name of the key</label>
        <input
          id={`${id}-name`}
          type="text"
          autoComplete="off"
          maxLength={100}
          value={name}
          aria-invalid={problem('name') ? true : undefined}
          onChange={(event) => setName(event.target.value)}
        />
        {problem('name') ? <p className="field-error">{problem('name')}</p> : null}
        <p className="hint">Shown in Traffic and to your gateway agent. Its claimed name is only a claim.</p>
      </div>
      <fieldset className="key-limits knock-skills">
        <legend>Skills the key opens</legend>
        <label className="check">
          <input
            type="checkbox"
            checked={everySkill}
            onChange={(event) => setEverySkill(event.target.checked)}
          />
          Every public and approved skill
        </label>
        {everySkill
          ? null
          : view.skills.map((skill) => (
              <label className="check" key={skill.id}>
                <input
                  type="checkbox"
                  checked={skills.includes(skill.id)}
                  onChange={(event) =>
                    setSkills((chosen) =>
                      event.target.checked
                        ? [...chosen, skill.id]
                        : chosen.filter((each) => each !== skill.id),
                    )
                  }
                />
                {skill.name}{' '}
                <span className="muted small">
                  ({skill.id}, {skill.audience})
                </span>
              </label>
            ))}
        {noSkill ? <p className="field-error">Choose at least one skill, or every one.</p> : null}
        {problem('skills') ? <p className="field-error">{problem('skills')}</p> : null}
      </fieldset>
      <fieldset className="key-limits">
        <legend>Its own limits (optional)</legend>
        {[
          {
            field: 'limits.requestsPerMinute',
            label: 'Requests per minute',
            value: rpm,
            set: setRpm,
            fallback: view.defaults.requestsPerMinute,
          },
          {
            field: 'limits.tokensPerDay',
            label: 'Tokens per day',
            value: tokens,
            set: setTokens,
            fallback: view.defaults.tokensPerDay,
          },
        ].map(({ field, label, value, set, fallback }) => (
          <div className="form-field" key={field}>
            <label htmlFor={`${id}-${field}`}>{label}</label>
            <input
              id={`${id}-${field}`}
              type="number"
              inputMode="numeric"
              min={1}
              step={1}
              placeholder={`default: ${formatCount(fallback)}`}
              value={value}
              aria-invalid={problem(field) ? true : undefined}
              onChange={(event) => set(event.target.value)}
            />
            {problem(field) ? <p className="field-error">{problem(field)}</p> : null}
          </div>
        ))}
      </fieldset>
      <div className="form-field">
        <label htmlFor={`${id}-expiry`}>Key expires</label>
        <select id={`${id}-expiry`} value={days} onChange={(event) => setDays(Number(event.target.value))}>
          {EXPIRIES.map((option) => (
            <option key={option.days} value={option.days}>
              {option.label}
            </option>
          ))}
        </select>
      </div>
      {general ? <ErrorNotice error={general} title="Not approved" /> : null}
      <div className="actions">
        <button type="submit" className="button primary" disabled={busy || noSkill}>
          {busy ? 'Approving…' : 'Approve and issue the key'}
        </button>
        <button type="button" className="button" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The reason the caller reads in its task: one of a few, or the operator's own (one line). */
function DenyReason({ reason, onChange }: { reason: string; onChange: (reason: string) => void }) {
  const id = useId();
  return (
    <div className="form-field">
      <p>
        Its task ends rejected, with this reason; its address may not knock again until the knock would have
        expired.
      </p>
      <label htmlFor={`${id}-reason`}>Reason the caller reads</label>
      <input
        id={`${id}-reason`}
        type="text"
        list={`${id}-reasons`}
        maxLength={300}
        value={reason}
        data-testid="knock-deny-reason"
        onChange={(event) => onChange(event.target.value)}
      />
      <datalist id={`${id}-reasons`}>
        {REASONS.map((each) => (
          <option key={each} value={each} />
        ))}
      </datalist>
    </div>
  );
}
