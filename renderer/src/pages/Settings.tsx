import { useCallback, useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import type { FieldError } from '../api/client';
import type {
  SettingSourceView,
  SettingsResponse,
  SettingsUpdateResponse,
  StatusResponse,
} from '../api/contract';
import { OpenAccessWarning } from '../components/AccessNotices';
import { Badge } from '../components/Badge';
import { ConsoleTokenCard } from '../components/ConsoleTokenCard';
import { agentName, GatewayAgentNotices } from '../components/GatewayAgent';
import { ErrorNotice, Loading, Notice } from '../components/States';
import { HelpLink } from '../components/HelpLink';
import { SectionNav } from '../components/SectionNav';
import { RichText } from '../components/Text';
import { TunnelPresets } from '../components/TunnelPresets';
import { useAction } from '../hooks/useAction';
import { useSectionJump } from '../hooks/useSectionJump';
import {
  changedSettings,
  describeSource,
  EMPTY_SECRETS,
  fieldErrorText,
  gatewayTokenNeeded,
  generateToken,
  isFormField,
  MASKED_PASSWORD,
  MASKED_PASSWORD_HINT,
  readOnlyHint,
  restartHint,
  SECTIONS,
  secretState,
  settingLabel,
  toFormValues,
  type FormValues,
  type SecretInputs,
  type SettingField,
} from '../settings/form';
import type { PageProps } from './types';

export function Settings({ api, data, replaceToken, tokenReplaced }: PageProps) {
  const load = useAction(() => api.settings());
  const { run: runLoad } = load;
  useEffect(() => {
    void runLoad();
  }, [runLoad]);
  useSectionJump(load.result !== undefined);

  if (load.error) {
    return (
      <div className="page settings">
        <ErrorNotice error={load.error} title="Cannot load the settings" />
        <button type="button" className="button" onClick={() => void load.run()}>
          Retry
        </button>
      </div>
    );
  }
  if (!load.result) return <Loading label="Loading the settings…" />;
  return (
    <>
      <SectionNav page="settings" label="Settings sections" sections={NAV} />
      <SettingsForm api={api} loaded={load.result} onSaved={data.refreshStatus} status={data.status} />
      <div data-section="console">
        <ConsoleTokenCard api={api} replaceToken={replaceToken} replaced={tokenReplaced} />
      </div>
    </>
  );
}

/** Every section, and the console's own access after the form. */
const NAV = [...SECTIONS.map(({ id, title }) => ({ id, title })), { id: 'console', title: 'Console access' }];

interface SettingsFormProps {
  api: PageProps['api'];
  loaded: SettingsResponse;
  /** Also what "Check again" calls after checking the gateway agent: both refresh the status. */
  onSaved: () => Promise<void>;
  /** The live status: the gateway agent's and the access policy's warnings belong beside their settings. */
  status?: StatusResponse | null;
}

export function SettingsForm({ api, loaded, onSaved, status }: SettingsFormProps) {
  const [initial, setInitial] = useState<FormValues>(() => toFormValues(loaded.settings));
  const [values, setValues] = useState<FormValues>(initial);
  const [secretsSet, setSecretsSet] = useState(loaded.secrets);
  const [sources, setSources] = useState(loaded.sources);
  const [secrets, setSecrets] = useState<SecretInputs>(EMPTY_SECRETS);
  const [saved, setSaved] = useState<SettingsUpdateResponse | null>(null);
  const [restartNeeded, setRestartNeeded] = useState<string[]>(loaded.restartNeeded);
  // Shown, never sent: the console refuses a change to one (403).
  const [readOnly, setReadOnly] = useState<readonly string[]>(loaded.readOnly);
  // Save was pressed with values the form itself refuses: their errors show (and follow the edits) until fixed.
  const [checked, setChecked] = useState(false);

  const { changes, errors: localErrors } = useMemo(
    () => changedSettings(initial, values, secrets, readOnly),
    [initial, values, secrets, readOnly],
  );
  const urlInUse = status?.gateway.url;
  const tokenNeeded = useMemo(
    () => gatewayTokenNeeded(initial, values, secrets, { tokenSet: secretsSet.gatewayToken.set, urlInUse }),
    [initial, values, secrets, secretsSet.gatewayToken.set, urlInUse],
  );
  // What keeps Save from sending: values the console would refuse, and the token a new address needs.
  const blocking = useMemo(
    () => (tokenNeeded ? [...localErrors, tokenNeeded] : localErrors),
    [localErrors, tokenNeeded],
  );
  // A field edited into something invalid is a change too: Save then says what is wrong with it.
  const changeCount = Object.keys(changes).length + localErrors.length;

  const save = useAction(async () => {
    const response = await api.updateSettings(changes);
    const next = toFormValues(response.settings);
    setInitial(next);
    setValues(next);
    setSecrets(EMPTY_SECRETS);
    setSecretsSet(response.secrets);
    setSources(response.sources);
    setRestartNeeded(response.restartNeeded);
    setReadOnly(response.readOnly);
    setSaved(response);
    void onSaved();
    return response;
  });

  // A preset applies at once (the tunnel restarts): the tunnel fields take its values, other edits stay.
  const presetApplied = (response: SettingsUpdateResponse) => {
    const next = toFormValues(response.settings);
    const tunnel = Object.fromEntries(
      ['tunnel', 'tunnelCommand', 'tunnelUrlPattern'].flatMap((name) =>
        next[name] === undefined ? [] : [[name, next[name]]],
      ),
    ) as FormValues;
    setInitial((current) => ({ ...current, ...tunnel }));
    setValues((current) => ({ ...current, ...tunnel }));
    setRestartNeeded(response.restartNeeded);
    void onSaved();
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(null);
    if (blocking.length > 0) {
      setChecked(true);
      save.reset();
      return;
    }
    setChecked(false);
    await save.run();
  };

  // Field errors: the token a new address needs (as soon as it does), the form's own checks (once Save was
  // pressed) and the console's `error.fields` (400, or 403 for a read-only setting).
  const { fieldErrors, otherErrors } = useMemo(() => {
    const mine: Record<string, string> = {};
    const others: FieldError[] = [];
    const shown = [...(tokenNeeded ? [tokenNeeded] : []), ...(checked ? localErrors : [])];
    for (const item of [...shown, ...(save.error?.fields ?? [])]) {
      const message = fieldErrorText(item);
      if (isFormField(item.field)) mine[item.field] ??= message;
      else others.push({ ...item, message });
    }
    return { fieldErrors: mine, otherErrors: others };
  }, [save.error, tokenNeeded, checked, localErrors]);
  const notSaved = (checked && blocking.length > 0) || (save.error?.fields.length ?? 0) > 0;

  const setValue = useCallback((name: string, value: string | boolean) => {
    setValues((current) => ({ ...current, [name]: value }));
    setSaved(null);
  }, []);

  const discard = () => {
    setValues(initial);
    setSecrets(EMPTY_SECRETS);
    setChecked(false);
    save.reset();
  };
  return (
    <form className="page settings" onSubmit={(event) => void submit(event)} noValidate aria-label="Settings">
      <h1 className="visually-hidden">Settings</h1>
      {restartNeeded.length > 0 ? (
        <Notice tone="warning" title="Restart needed" testId="restart-banner">
          <p className="notice-message">
            Restart the agent to apply: {restartNeeded.map(settingLabel).join(', ')}.
          </p>
        </Notice>
      ) : null}

      <div className="settings-sections">
        {SECTIONS.map((section) => (
          <fieldset key={section.id} className="card settings-section" data-section={section.id}>
            <legend className="card-header">
              <h2>{section.title}</h2>
            </legend>
            <div className="card-body">
              <p className="muted section-intro">
                {section.description ? `${section.description} ` : null}
                <HelpLink to={section.help} topic={`${section.title} settings`} />
              </p>
              {section.id === 'gateway' && status ? (
                <GatewayAgentNotices agent={status.gateway.agent} api={api} onChecked={onSaved} />
              ) : null}
              {section.id === 'access' && status?.access.policy === 'open' ? (
                <OpenAccessWarning agent={agentName(status.gateway.agent)} />
              ) : null}
              {section.fields.map((field) => (
                <FormField
                  key={field.name}
                  field={field}
                  value={values[field.name] ?? ''}
                  readOnly={readOnly.includes(field.name)}
                  pendingRestart={restartNeeded.includes(field.name)}
                  source={sources[field.name]}
                  changed={field.name in changes || localErrors.some((e) => e.field === field.name)}
                  error={fieldErrors[field.name]}
                  onChange={setValue}
                />
              ))}
              {section.id === 'tunnel' ? (
                <TunnelPresets api={api} presets={loaded.tunnelPresets} onApplied={presetApplied} />
              ) : null}
              {section.id === 'gateway' ? (
                <SecretField
                  name="gatewayToken"
                  label="Gateway token"
                  state={secretsSet.gatewayToken.set ? secretState('set', sources.gatewayToken) : 'not set'}
                  isSet={secretsSet.gatewayToken.set}
                  stateTestId="gateway-token-state"
                  value={secrets.gatewayToken}
                  required={tokenNeeded !== undefined}
                  error={fieldErrors.gatewayToken}
                  help="Write-only: the console never shows it. Type a new one to replace it."
                  onChange={(gatewayToken) => setSecrets((s) => ({ ...s, gatewayToken }))}
                />
              ) : null}
              {section.id === 'access' ? (
                <SecretField
                  name="bearerTokens"
                  label="Bearer tokens"
                  multiline
                  state={secretState(`${secretsSet.bearerTokens.count} set`, sources.bearerTokens)}
                  isSet={secretsSet.bearerTokens.count > 0}
                  stateTestId="bearer-token-count"
                  value={secrets.bearerTokens}
                  error={fieldErrors.bearerTokens}
                  help={`Write-only. For “Authenticated”: callers send one as \`Authorization: Bearer …\`. New tokens (one per line) replace the ${secretsSet.bearerTokens.count} set now.`}
                  onChange={(bearerTokens) => setSecrets((s) => ({ ...s, bearerTokens }))}
                  onGenerate={() =>
                    setSecrets((s) => ({
                      ...s,
                      bearerTokens: [s.bearerTokens.trim(), generateToken()].filter(Boolean).join('\n'),
                    }))
                  }
                />
              ) : null}
            </div>
          </fieldset>
        ))}
      </div>

      <div className="save-bar" data-testid="save-bar">
        <div className="save-status" role="status" aria-live="polite">
          {save.error && !notSaved ? <ErrorNotice error={save.error} title="Not saved" /> : null}
          {notSaved ? (
            <div className="notice error" role="alert" data-testid="settings-errors">
              <p className="notice-title">Not saved: fix the marked fields.</p>
              {otherErrors.map((item) => (
                <p key={`${item.field}:${item.message}`} className="notice-message">
                  {item.message}
                </p>
              ))}
            </div>
          ) : null}
          {saved ? (
            <div className="notice success" data-testid="settings-saved">
              <p className="notice-title">Saved.</p>
              <p className="notice-message">
                {saved.applied.length > 0
                  ? `Applied now: ${saved.applied.map(settingLabel).join(', ')}.`
                  : 'Nothing applied at once.'}
                {saved.restartNeeded.length > 0
                  ? ` After a restart: ${saved.restartNeeded.map(settingLabel).join(', ')}.`
                  : ''}
              </p>
            </div>
          ) : null}
          {!saved && !save.error && !notSaved ? (
            <span className="muted">
              {changeCount === 0
                ? 'No changes'
                : `${changeCount} unsaved change${changeCount === 1 ? '' : 's'}`}
            </span>
          ) : null}
        </div>
        <div className="actions">
          <button
            type="button"
            className="button"
            onClick={discard}
            disabled={changeCount === 0 || save.busy}
          >
            Discard
          </button>
          <button type="submit" className="button primary" disabled={changeCount === 0 || save.busy}>
            {save.busy ? 'Saving…' : 'Save changes'}
          </button>
        </div>
      </div>
    </form>
  );
}

interface FormFieldProps {
  field: SettingField;
  value: string | boolean;
  /** A setting the console may not change (SettingsResponse.readOnly): its value and where to set it. */
  readOnly?: boolean;
  /** A setting read at start, saved since: the running agent still uses the old value. */
  pendingRestart?: boolean;
  /** Where the value in use comes from (and the value, when another place than this setting supplies it). */
  source?: SettingSourceView;
  changed: boolean;
  error?: string;
  onChange: (name: string, value: string | boolean) => void;
}

function FormField(props: FormFieldProps) {
  const { field, value, readOnly = false, pendingRestart = false, source, changed, error, onChange } = props;
  const id = useId();
  const helpId = `${id}-help`;
  const sourceId = `${id}-source`;
  const readOnlyId = `${id}-read-only`;
  const restartId = `${id}-restart`;
  const maskedId = `${id}-masked`;
  const errorId = `${id}-error`;
  const masked = field.maskedPassword === true && String(value).includes(MASKED_PASSWORD);
  const describedBy =
    [
      source ? sourceId : '',
      field.help ? helpId : '',
      field.restart ? restartId : '',
      readOnly ? readOnlyId : '',
      masked ? maskedId : '',
      error ? errorId : '',
    ]
      .filter(Boolean)
      .join(' ') || undefined;
  const common = {
    id,
    name: field.name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  } as const;
  // Not set here: the field shows, greyed, the value another place supplies (its source says which).
  const placeholder = source?.value === undefined ? field.placeholder : String(source.value);

  let control;
  switch (readOnly ? 'read-only' : field.kind) {
    case 'read-only':
      control =
        field.kind === 'list' || field.kind === 'textarea' ? (
          <textarea {...common} readOnly rows={field.rows ?? 2} value={String(value)} placeholder="not set" />
        ) : (
          <input
            {...common}
            type="text"
            readOnly
            spellCheck={false}
            value={readOnlyText(field, value)}
            placeholder="not set"
          />
        );
      break;
    case 'boolean':
      control = (
        <input
          {...common}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(field.name, e.target.checked)}
        />
      );
      break;
    case 'select':
      control = (
        <select {...common} value={String(value)} onChange={(e) => onChange(field.name, e.target.value)}>
          {field.options?.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      );
      break;
    case 'list':
    case 'textarea':
      control = (
        <textarea
          {...common}
          rows={field.rows ?? (field.kind === 'list' ? 3 : 2)}
          value={String(value)}
          placeholder={field.placeholder}
          onChange={(e) => onChange(field.name, e.target.value)}
        />
      );
      break;
    default:
      control = (
        <input
          {...common}
          type={field.kind === 'number' ? 'text' : field.kind === 'url' ? 'url' : 'text'}
          inputMode={field.kind === 'number' ? 'numeric' : undefined}
          spellCheck={false}
          value={String(value)}
          placeholder={placeholder}
          onChange={(e) => onChange(field.name, e.target.value)}
        />
      );
  }

  return (
    <div
      className={`form-field ${field.kind} ${readOnly ? 'read-only' : ''} ${error ? 'invalid' : ''} ${changed ? 'changed' : ''}`}
      data-field={field.name}
      data-read-only={readOnly ? 'true' : undefined}
    >
      {field.kind === 'boolean' && !readOnly ? (
        <div className="checkbox-row">
          {control}
          <label htmlFor={id}>{field.label}</label>
        </div>
      ) : (
        <>
          <label htmlFor={id}>
            {field.label}
            {/* Seen, not announced: the save bar says how many changes wait (a name that changes as you type would
                be noise). */}
            {changed ? <span className="changed-dot" title="Changed" aria-hidden="true" /> : null}
          </label>
          {control}
        </>
      )}
      {source ? (
        <p
          id={sourceId}
          className="hint setting-source"
          data-testid="setting-source"
          data-source={source.source}
        >
          {describeSource(source, field)}
        </p>
      ) : null}
      {field.help ? (
        <p id={helpId} className="hint">
          <RichText text={field.help} />
        </p>
      ) : null}
      {field.restart ? (
        <p
          id={restartId}
          className={`hint ${pendingRestart ? 'restart-pending' : ''}`}
          data-testid="restart-hint"
          data-pending={pendingRestart}
        >
          {restartHint(pendingRestart)}
        </p>
      ) : null}
      {readOnly ? (
        <p id={readOnlyId} className="hint read-only-hint" data-testid="read-only-hint">
          {readOnlyHint(field.name)}
        </p>
      ) : null}
      {masked ? (
        <p id={maskedId} className="hint" data-testid="masked-password-hint">
          {MASKED_PASSWORD_HINT}
        </p>
      ) : null}
      {field.maxLength !== undefined && !readOnly ? (
        <p className={`hint char-count ${String(value).trim().length > field.maxLength ? 'over' : ''}`}>
          {String(value).trim().length} of {field.maxLength} characters
        </p>
      ) : null}
      {error ? (
        <p id={errorId} className="field-error" data-testid="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** A read-only value as text: a select's label, a boolean as On / Off. */
function readOnlyText(field: SettingField, value: string | boolean): string {
  if (field.kind === 'boolean') return value === true ? 'On' : 'Off';
  return field.options?.find((option) => option.value === value)?.label ?? String(value);
}

interface SecretFieldProps {
  name: string;
  label: string;
  /** "set", "2 set", "set (from openclaw.json)", "not set": never the value. */
  state: string;
  isSet: boolean;
  stateTestId: string;
  value: string;
  /** A new value must be typed before saving (the gateway token, when the gateway's address changes). */
  required?: boolean;
  error?: string;
  help: string;
  multiline?: boolean;
  onChange: (value: string) => void;
  onGenerate?: () => void;
}

/** A write-only secret: shows whether it is set, never its value; typing a new one replaces it. */
function SecretField(props: SecretFieldProps) {
  const {
    name,
    label,
    state,
    isSet,
    stateTestId,
    value,
    required,
    error,
    help,
    multiline,
    onChange,
    onGenerate,
  } = props;
  const id = useId();
  const describedBy = `${id}-help${error ? ` ${id}-error` : ''}`;
  const common = {
    id,
    name,
    value,
    autoComplete: 'off',
    spellCheck: false,
    required,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  } as const;
  return (
    <div className={`form-field secret ${error ? 'invalid' : ''}`} data-field={name}>
      <div className="secret-head">
        <label htmlFor={id}>New {label.toLowerCase()}</label>
        <span className="secret-state">
          {label}:{' '}
          <Badge tone={isSet ? 'ok' : 'neutral'}>
            <span data-testid={stateTestId}>{state}</span>
          </Badge>
        </span>
      </div>
      <div className="secret-row">
        {multiline ? (
          <textarea {...common} rows={2} onChange={(e) => onChange(e.target.value)} className="mono" />
        ) : (
          <input {...common} type="password" onChange={(e) => onChange(e.target.value)} />
        )}
        {onGenerate ? (
          <button type="button" className="button" onClick={onGenerate}>
            Generate
          </button>
        ) : null}
      </div>
      <p id={`${id}-help`} className="hint">
        <RichText text={help} />
      </p>
      {error ? (
        <p id={`${id}-error`} className="field-error" data-testid="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
