/**
 * "Issue a key": the name of the agent it is for, an optional expiry, optional limits of its own, and the
 * skills it may call (every public and approved one, or exactly those ticked). The console checks everything
 * again and names each field at fault; its words show under that field.
 */
import { useId, useState, type FormEvent } from 'react';
import type { ApiRequestError } from '../api/client';
import type { A2AKeyIssueRequest, A2AKeysResponse, SkillView } from '../api/contract';
import { formatCount } from '../lib/format';
import { scopeProblem, SkillScope } from './SkillScope';
import { ErrorNotice } from './States';

export const MAX_NAME_LENGTH = 100;

const EXPIRIES: readonly { days: number; label: string }[] = [
  { days: 0, label: 'Never' },
  { days: 7, label: 'In 7 days' },
  { days: 30, label: 'In 30 days' },
  { days: 90, label: 'In 90 days' },
  { days: 365, label: 'In 1 year' },
];

interface IssueKeyFormProps {
  defaults: A2AKeysResponse['defaults'] | undefined;
  /** The skills a key may be scoped to (undefined while they load or cannot be read). */
  skills: readonly SkillView[] | undefined;
  busy: boolean;
  error: ApiRequestError | null;
  /** Resolves true once issued: the form is then emptied. */
  onIssue: (request: A2AKeyIssueRequest) => Promise<boolean>;
}

export function IssueKeyForm({ defaults, skills, busy, error, onIssue }: IssueKeyFormProps) {
  const id = useId();
  const [name, setName] = useState('');
  const [days, setDays] = useState(0);
  const [rpm, setRpm] = useState('');
  const [tokens, setTokens] = useState('');
  const [nameMissing, setNameMissing] = useState(false);
  const [scope, setScope] = useState<string[] | undefined>(undefined);
  const [scopeTried, setScopeTried] = useState(false);

  const problem = (field: string) => error?.fields.find((each) => each.field === field)?.message;
  const nameProblem = nameMissing ? 'Name the agent the key is for.' : problem('name');
  const scopeLocal = scopeProblem(scope);
  const scopeError = (scopeTried ? scopeLocal : undefined) ?? problem('skills');
  const fields = [
    { field: 'limits.requestsPerMinute', label: 'Requests per minute', value: rpm, set: setRpm },
    { field: 'limits.tokensPerDay', label: 'Tokens per day', value: tokens, set: setTokens },
  ];
  const defaultOf = (field: string) =>
    defaults
      ? formatCount(field === 'limits.tokensPerDay' ? defaults.tokensPerDay : defaults.requestsPerMinute)
      : undefined;
  // An error the fields do not explain (Redis down, the most keys in use) shows above the button.
  const general = error && error.fields.length === 0 ? error : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() === '') setNameMissing(true);
    setScopeTried(true);
    if (name.trim() === '' || scopeLocal) return;
    const limit = (text: string) => (text.trim() === '' ? undefined : Number(text));
    const limits = { requestsPerMinute: limit(rpm), tokensPerDay: limit(tokens) };
    const request: A2AKeyIssueRequest = {
      name: name.trim(),
      ...(days > 0 ? { expiresAt: new Date(Date.now() + days * 86_400_000).toISOString() } : {}),
      ...(limits.requestsPerMinute !== undefined || limits.tokensPerDay !== undefined ? { limits } : {}),
      ...(scope ? { skills: scope } : {}),
    };
    if (!(await onIssue(request))) return;
    setName('');
    setDays(0);
    setRpm('');
    setTokens('');
    setScope(undefined);
    setScopeTried(false);
  };

  return (
    <form
      className="key-form"
      onSubmit={(event) => void submit(event)}
      noValidate
      data-testid="issue-key-form"
    >
      <div className="form-field key-name">
        <label htmlFor={`${id}-name`}>Name of the agent it is for</label>
        <input
          id={`${id}-name`}
          type="text"
          autoComplete="off"
          maxLength={MAX_NAME_LENGTH}
          placeholder="Research agent (Acme)"
          value={name}
          aria-invalid={nameProblem ? true : undefined}
          aria-describedby={nameProblem ? `${id}-name-error` : `${id}-name-help`}
          onChange={(event) => {
            setName(event.target.value);
            setNameMissing(false);
          }}
        />
        {nameProblem ? (
          <p id={`${id}-name-error`} className="field-error">
            {nameProblem}
          </p>
        ) : (
          <p id={`${id}-name-help`} className="hint">
            Shown in Traffic and to your gateway agent, so you know who is calling.
          </p>
        )}
      </div>
      <div className="form-field">
        <label htmlFor={`${id}-expiry`}>Expires</label>
        <select
          id={`${id}-expiry`}
          value={days}
          aria-invalid={problem('expiresAt') ? true : undefined}
          aria-describedby={problem('expiresAt') ? `${id}-expiry-error` : undefined}
          onChange={(event) => setDays(Number(event.target.value))}
        >
          {EXPIRIES.map((option) => (
            <option key={option.days} value={option.days}>
              {option.label}
            </option>
          ))}
        </select>
        {problem('expiresAt') ? (
          <p id={`${id}-expiry-error`} className="field-error">
            {problem('expiresAt')}
          </p>
        ) : null}
      </div>
      <fieldset className="key-limits">
        <legend>Its own limits (optional)</legend>
        {fields.map(({ field, label, value, set }) => {
          const fieldId = `${id}-${field}`;
          const fieldProblem = problem(field);
          const fallback = defaultOf(field);
          return (
            <div className="form-field" key={field}>
              <label htmlFor={fieldId}>{label}</label>
              <input
                id={fieldId}
                type="number"
                inputMode="numeric"
                min={1}
                step={1}
                placeholder={fallback ? `default: ${fallback}` : 'default'}
                value={value}
                aria-invalid={fieldProblem ? true : undefined}
                aria-describedby={fieldProblem ? `${fieldId}-error` : undefined}
                onChange={(event) => set(event.target.value)}
              />
              {fieldProblem ? (
                <p id={`${fieldId}-error`} className="field-error">
                  {fieldProblem}
                </p>
              ) : null}
            </div>
          );
        })}
        <p className="hint">
          Empty: the per-sender limits of Settings. A key never gets past the agent’s limit for all callers.
        </p>
      </fieldset>
      <SkillScope
        legend="Skills it may call"
        skills={skills}
        value={scope}
        error={scopeError}
        onChange={(next) => {
          setScope(next);
          setScopeTried(false);
        }}
      />
      {general ? <ErrorNotice error={general} title="No key issued" /> : null}
      <div className="actions">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Issuing…' : 'Issue key'}
        </button>
      </div>
    </form>
  );
}
