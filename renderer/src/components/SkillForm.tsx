/**
 * Adding or editing a skill, in three steps: what callers see of it (id, name, description, examples); the
 * OpenClaw agent it runs on (a new one from a template, whose config the console proposes, or one the
 * operator has), checked until it has the class intended; and who may call it (only the audiences that
 * class allows) with its own limits. The console checks everything again; its words show under each field.
 */
import { useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import type { ApiClient } from '../api/client';
import {
  SKILL_TEMPLATES,
  type SandboxBackend,
  type SkillSnippetRequest,
  type SkillSnippetResponse,
  type SkillsResponse,
  type SkillTemplate,
  type SkillView,
  type ToolClass,
} from '../api/contract';
import { useAction } from '../hooks/useAction';
import { formatCount } from '../lib/format';
import {
  addRequest,
  audienceAllows,
  defaultAudience,
  editRequest,
  emptyForm,
  formOf,
  formProblems,
  type SkillFormValues,
} from '../lib/skills';
import { AgentProposal } from './AgentProposal';
import { AudienceChoice } from './AudienceChoice';
import { ErrorNotice } from './States';

export type SkillFormMode = { kind: 'add' } | { kind: 'edit'; view: SkillView };

/** The fields the form shows the console's words under (`field` of its refusals). */
const FORM_FIELDS = [
  'id',
  'name',
  'description',
  'examples',
  'agent',
  'audience',
  'limits.requestsPerMinute',
  'limits.tokensPerDay',
];

interface SkillFormProps {
  api: ApiClient;
  mode: SkillFormMode;
  /** The per-caller limits a skill without its own gets. */
  defaults: SkillView['limits'] | undefined;
  /** The agents the gateway lists (for "Custom: an existing agent"). */
  agents: readonly string[];
  /** Saved: the skills as they are now, and what to tell the operator. */
  onSaved: (response: SkillsResponse, message: string) => void;
  onCancel: () => void;
}

interface Proposal {
  /** What was asked: a change of any of it makes the proposal stale. */
  key: string;
  first: SkillSnippetResponse;
  latest: SkillSnippetResponse;
}

export function SkillForm({ api, mode, defaults, agents, onSaved, onCancel }: SkillFormProps) {
  const id = useId();
  const editing = mode.kind === 'edit' ? mode.view : undefined;
  const [values, setValues] = useState<SkillFormValues>(() =>
    editing ? formOf(editing.setting) : emptyForm(),
  );
  const [template, setTemplate] = useState<SkillTemplate>(editing ? 'custom' : 'research');
  const [backend, setBackend] = useState<SandboxBackend>('docker');
  // A new agent is named for its skill until the operator names it otherwise.
  const [agentTouched, setAgentTouched] = useState(editing !== undefined);
  const [proposal, setProposal] = useState<Proposal | null>(null);
  const [tried, setTried] = useState(false);

  const set = <K extends keyof SkillFormValues>(field: K, value: SkillFormValues[K]) =>
    setValues((current) => ({ ...current, [field]: value }));
  const agent = agentTouched || template === 'custom' ? values.agent : values.id;
  const request: SkillSnippetRequest = {
    template,
    agent: agent.trim(),
    ...(values.sandboxNetwork ? { sandboxNetwork: true } : {}),
    ...(template === 'sandboxed' ? { backend } : {}),
  };
  const key = JSON.stringify(request);
  const current = proposal?.key === key ? proposal : null;

  const asked = useRef(request);
  const propose = useAction(async () => {
    const answer = await api.proposeSkillConfig(asked.current);
    // The skill runs on the agent as OpenClaw writes its id (lower case).
    if (answer.agent !== asked.current.agent) {
      setAgentTouched(true);
      set('agent', answer.agent);
    }
    asked.current = { ...asked.current, agent: answer.agent };
    setProposal({ key: JSON.stringify(asked.current), first: answer, latest: answer });
    return answer;
  });
  const checkAgain = useAction(async () => {
    if (!current) return undefined;
    const answer = await api.proposeSkillConfig(asked.current);
    setProposal({ ...current, latest: answer });
    return answer;
  });

  // The class the audience is judged on: the agent as last checked, or the saved skill's when unchanged.
  const unchanged =
    editing !== undefined &&
    values.agent.trim() === editing.setting.agent &&
    values.sandboxNetwork === (editing.setting.sandboxNetwork === true);
  const toolClass: ToolClass | undefined = unchanged ? editing.tools.class : current?.latest.tools.class;
  const audience =
    toolClass && audienceAllows(values.audience, toolClass) ? values.audience : defaultAudience(toolClass);

  const save = useAction(async () => {
    const filled = { ...values, agent, audience };
    if (editing) {
      const changes = editRequest(editing.setting, filled);
      const response = await api.editSkill(editing.setting.id, changes);
      return { response, message: `Saved “${filled.name.trim()}”.` };
    }
    const response = await api.addSkill(addRequest(filled));
    const added = response.skills.find((each) => each.setting.id === filled.id.trim());
    const serves = added?.serving.serving !== false;
    return {
      response,
      message: `Added “${filled.name.trim()}” (${filled.id.trim()}): the cards list it${serves ? ', and its callers reach it now.' : '; it does not serve yet, its card below says why.'}`,
    };
  });

  const local = formProblems({ ...values, agent }, !editing);
  if (toolClass === undefined)
    local.audience = editing
      ? 'Check the new agent first: which audiences the skill may have depends on its tools.'
      : 'Check its agent first: which audiences the skill may have depends on its tools.';
  const problem = (field: string) =>
    (tried ? local[field] : undefined) ?? save.error?.fields.find((each) => each.field === field)?.message;
  // A refusal by the rules (409), or one naming a field the form does not show, is said whole with its fix.
  const general =
    save.error &&
    (save.error.status !== 400 || !save.error.fields.every((each) => FORM_FIELDS.includes(each.field)))
      ? save.error
      : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTried(true);
    if (Object.keys(local).length > 0) return;
    const done = await save.run();
    if (done) onSaved(done.response, done.message);
  };

  const runPropose = () => {
    asked.current = request;
    checkAgain.reset();
    void propose.run();
  };
  const withSnippet = !editing && template !== 'custom';

  return (
    <form className="skill-form" noValidate onSubmit={(event) => void submit(event)} data-testid="skill-form">
      <fieldset className="skill-form-step">
        <legend className="skill-form-legend">What callers see</legend>
        {editing ? null : (
          <TextField
            id={`${id}-id`}
            label="Id"
            value={values.id}
            hint="Lower case letters, digits and dashes: the SAMVAD envelope’s skill and the A2A card’s path. It cannot change later."
            error={problem('id')}
            onChange={(value) => set('id', value)}
            placeholder="research"
          />
        )}
        <TextField
          id={`${id}-name`}
          label="Name"
          value={values.name}
          error={problem('name')}
          onChange={(value) => set('name', value)}
          placeholder="Research"
        />
        <TextField
          id={`${id}-description`}
          label="Description"
          value={values.description}
          error={problem('description')}
          onChange={(value) => set('description', value)}
          placeholder="Searches the web and answers with the sources it read."
          multiline
        />
        <TextField
          id={`${id}-examples`}
          label="Examples (optional)"
          value={values.examples}
          hint="Sample requests for the cards, one a line (at most 5)."
          error={problem('examples')}
          onChange={(value) => set('examples', value)}
          multiline
        />
      </fieldset>

      <fieldset className="skill-form-step">
        <legend className="skill-form-legend">The agent it runs on</legend>
        {editing ? (
          <p className="hint">
            Now agent <code>{editing.setting.agent}</code>, {editing.tools.class}. Another agent, or a change
            of its sandbox’s network, is checked before it is saved; a host skill is then accepted again.
          </p>
        ) : (
          <fieldset className="policy-options template-options" data-testid="template-choice">
            <legend className="visually-hidden">Template</legend>
            {SKILL_TEMPLATES.map((each) => (
              <label
                key={each.id}
                className={`policy-option ${each.id === template ? 'selected' : ''}`}
                data-testid={`template-${each.id}`}
              >
                <input
                  type="radio"
                  name={`${id}-template`}
                  value={each.id}
                  checked={each.id === template}
                  aria-labelledby={`${id}-template-${each.id}`}
                  aria-describedby={`${id}-template-${each.id}-text`}
                  onChange={() => setTemplate(each.id)}
                />
                <span className="policy-text">
                  <span className="policy-title" id={`${id}-template-${each.id}`}>
                    {each.name}
                  </span>
                  <span className="hint" id={`${id}-template-${each.id}-text`}>
                    {each.summary}
                  </span>
                </span>
              </label>
            ))}
          </fieldset>
        )}
        <div className="skill-agent-row">
          <TextField
            id={`${id}-agent`}
            label="OpenClaw agent"
            value={agent}
            hint={
              withSnippet
                ? 'A new agent for this skill (its id by default). Not main, nor the agent chat or another skill runs on.'
                : `One the gateway has${agents.length > 0 ? `: ${agents.join(', ')}` : ''}.`
            }
            error={problem('agent')}
            list={withSnippet ? undefined : `${id}-agents`}
            onChange={(value) => {
              setAgentTouched(true);
              set('agent', value);
            }}
            placeholder={withSnippet ? values.id || 'research' : 'public'}
          />
          {withSnippet ? null : (
            <datalist id={`${id}-agents`}>
              {agents.map((each) => (
                <option key={each} value={each} />
              ))}
            </datalist>
          )}
          {template === 'sandboxed' ? (
            <div className="form-field">
              <label htmlFor={`${id}-backend`}>Container runtime</label>
              <select
                id={`${id}-backend`}
                value={backend}
                onChange={(event) => setBackend(event.target.value as SandboxBackend)}
              >
                <option value="docker">Docker</option>
                <option value="podman">Podman (rootless)</option>
              </select>
            </div>
          ) : null}
        </div>
        {template === 'sandboxed' || template === 'custom' ? (
          <div className="checkbox-row">
            <input
              id={`${id}-network`}
              type="checkbox"
              checked={values.sandboxNetwork}
              aria-describedby={`${id}-network-hint`}
              onChange={(event) => set('sandboxNetwork', event.target.checked)}
            />
            <label htmlFor={`${id}-network`}>Let its sandbox reach the network</label>
            <span id={`${id}-network-hint`} className="hint">
              For an agent in OpenClaw’s sandbox only: its container may then reach the internet, never this
              machine’s own network namespace.
            </span>
          </div>
        ) : null}
        <div className="actions">
          <button
            type="button"
            className="button"
            onClick={runPropose}
            disabled={propose.busy || agent.trim() === ''}
          >
            {propose.busy ? 'Asking…' : withSnippet ? 'Propose the config' : 'Check the agent'}
          </button>
        </div>
        {propose.error ? <ErrorNotice error={propose.error} title="No config proposed" /> : null}
        {current ? (
          <AgentProposal
            proposal={current.first}
            latest={current.latest}
            checking={checkAgain.busy}
            error={checkAgain.error}
            onCheckAgain={() => void checkAgain.run()}
          />
        ) : null}
      </fieldset>

      <fieldset className="skill-form-step">
        <AudienceChoice
          name={`${id}-audience`}
          selected={audience}
          toolClass={toolClass}
          unknownText={local.audience ?? ''}
          note={
            current && ['not-applied', 'not-loaded'].includes(current.latest.outcome.state)
              ? 'Until the gateway runs its agent as proposed, it counts as host: merge the config above and check again to offer more than named callers.'
              : undefined
          }
          error={save.error?.fields.find((each) => each.field === 'audience')?.message}
          onChoose={(value) => set('audience', value)}
        />
        <fieldset className="key-limits">
          <legend>Its own limits per caller (optional)</legend>
          <TextField
            id={`${id}-rpm`}
            label="Requests per minute"
            value={values.requestsPerMinute}
            numeric
            placeholder={defaults ? `default: ${formatCount(defaults.requestsPerMinute)}` : 'default'}
            error={problem('limits.requestsPerMinute')}
            onChange={(value) => set('requestsPerMinute', value)}
          />
          <TextField
            id={`${id}-tokens`}
            label="Tokens per day"
            value={values.tokensPerDay}
            numeric
            placeholder={defaults ? `default: ${formatCount(defaults.tokensPerDay)}` : 'default'}
            error={problem('limits.tokensPerDay')}
            onChange={(value) => set('tokensPerDay', value)}
          />
          <p className="hint">
            Empty: the per-sender limits of Settings. A caller’s own key limits apply too.
          </p>
        </fieldset>
      </fieldset>

      {general ? (
        <ErrorNotice error={general} title={editing ? 'Not saved' : 'The skill was not added'} />
      ) : null}
      <div className="actions">
        <button type="submit" className="button primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : editing ? 'Save changes' : 'Add skill'}
        </button>
        <button type="button" className="button" onClick={onCancel} disabled={save.busy}>
          Cancel
        </button>
        {tried && Object.keys(local).length > 0 ? (
          <span className="field-error" role="status" data-testid="skill-form-problems">
            {Object.values(local)[0]}
          </span>
        ) : null}
      </div>
    </form>
  );
}

interface TextFieldProps {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: ReactNode;
  error?: string;
  placeholder?: string;
  multiline?: boolean;
  numeric?: boolean;
  list?: string;
}

function TextField({
  id,
  label,
  value,
  onChange,
  hint,
  error,
  placeholder,
  multiline,
  numeric,
  list,
}: TextFieldProps) {
  const described = error ? `${id}-error` : hint ? `${id}-hint` : undefined;
  const common = {
    id,
    value,
    placeholder,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': described,
  } as const;
  return (
    <div className={`form-field ${multiline ? 'textarea' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {multiline ? (
        <textarea {...common} rows={3} onChange={(event) => onChange(event.target.value)} />
      ) : (
        <input
          {...common}
          type={numeric ? 'number' : 'text'}
          inputMode={numeric ? 'numeric' : undefined}
          min={numeric ? 1 : undefined}
          step={numeric ? 1 : undefined}
          autoComplete="off"
          list={list}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
      {error ? (
        <p id={`${id}-error`} className="field-error" data-testid="field-error">
          {error}
        </p>
      ) : hint ? (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}
