import { useCallback, useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import { ApiRequestError, type FieldError } from '../api/client';
import type { SettingsResponse, SettingsUpdateResponse, StatusResponse } from '../api/contract';
import { OpenAccessWarning } from '../components/AccessNotices';
import { Badge } from '../components/Badge';
import { agentName, GatewayAgentNotices } from '../components/GatewayAgent';
import { ErrorNotice, Loading, Notice } from '../components/States';
import { RichText } from '../components/Text';
import { useAction } from '../hooks/useAction';
import {
  changedSettings,
  EMPTY_SECRETS,
  generateToken,
  isFormField,
  SECTIONS,
  settingLabel,
  toFormValues,
  type FormValues,
  type SecretInputs,
  type SettingField,
} from '../settings/form';
import type { PageProps } from './types';

export function Settings({ api, data }: PageProps) {
  const load = useAction(() => api.settings());
  const { run: runLoad } = load;
  useEffect(() => {
    void runLoad();
  }, [runLoad]);

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
  return <SettingsForm api={api} loaded={load.result} onSaved={data.refreshStatus} status={data.status} />;
}

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
  const [secretState, setSecretState] = useState(loaded.secrets);
  const [secrets, setSecrets] = useState<SecretInputs>(EMPTY_SECRETS);
  const [saved, setSaved] = useState<SettingsUpdateResponse | null>(null);
  const [restartNeeded, setRestartNeeded] = useState<string[]>(loaded.restartNeeded);

  const { changes, errors: localErrors } = useMemo(
    () => changedSettings(initial, values, secrets),
    [initial, values, secrets],
  );
  // A field edited into something invalid is a change too: Save then says what is wrong with it.
  const changeCount = Object.keys(changes).length + localErrors.length;

  const save = useAction(async () => {
    const { changes: toSend, errors } = changedSettings(initial, values, secrets);
    if (errors.length > 0) throw new ApiRequestError(0, 'Some values are not valid.', undefined, errors);
    const response = await api.updateSettings(toSend);
    const next = toFormValues(response.settings);
    setInitial(next);
    setValues(next);
    setSecrets(EMPTY_SECRETS);
    setSecretState(response.secrets);
    setRestartNeeded(response.restartNeeded);
    setSaved(response);
    void onSaved();
    return response;
  });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(null);
    await save.run();
  };

  // Field errors, from the form's own checks or from the console's `error.fields`.
  const { fieldErrors, otherErrors } = useMemo(() => {
    const mine: Record<string, string> = {};
    const others: FieldError[] = [];
    for (const item of save.error?.fields ?? []) {
      if (isFormField(item.field) && !mine[item.field]) mine[item.field] = item.message;
      else others.push(item);
    }
    return { fieldErrors: mine, otherErrors: others };
  }, [save.error]);

  const setValue = useCallback((name: string, value: string | boolean) => {
    setValues((current) => ({ ...current, [name]: value }));
    setSaved(null);
  }, []);

  const discard = () => {
    setValues(initial);
    setSecrets(EMPTY_SECRETS);
    save.reset();
  };

  const errorCount = Object.keys(fieldErrors).length;
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

      {SECTIONS.map((section) => (
        <fieldset key={section.id} className="card settings-section" data-section={section.id}>
          <legend className="card-header">
            <h2>{section.title}</h2>
          </legend>
          <div className="card-body">
            {section.description ? <p className="muted">{section.description}</p> : null}
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
                changed={field.name in changes || localErrors.some((e) => e.field === field.name)}
                error={fieldErrors[field.name]}
                onChange={setValue}
              />
            ))}
            {section.id === 'gateway' ? (
              <SecretField
                name="gatewayToken"
                label="Gateway token"
                state={secretState.gatewayToken.set ? 'set' : 'not set'}
                stateTestId="gateway-token-state"
                value={secrets.gatewayToken}
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
                state={`${secretState.bearerTokens.count} set`}
                stateTestId="bearer-token-count"
                value={secrets.bearerTokens}
                error={fieldErrors.bearerTokens}
                help={`Write-only. For “Authenticated”: callers send one as \`Authorization: Bearer …\`. New tokens (one per line) replace the ${secretState.bearerTokens.count} set now.`}
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

      <div className="save-bar" data-testid="save-bar">
        <div className="save-status" role="status" aria-live="polite">
          {save.error && errorCount === 0 && otherErrors.length === 0 ? (
            <ErrorNotice error={save.error} title="Not saved" />
          ) : null}
          {errorCount > 0 || otherErrors.length > 0 ? (
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
          {!saved && !save.error ? (
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
  changed: boolean;
  error?: string;
  onChange: (name: string, value: string | boolean) => void;
}

function FormField({ field, value, changed, error, onChange }: FormFieldProps) {
  const id = useId();
  const helpId = `${id}-help`;
  const errorId = `${id}-error`;
  const describedBy = [field.help ? helpId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: field.name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  } as const;

  let control;
  switch (field.kind) {
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
          placeholder={field.placeholder}
          onChange={(e) => onChange(field.name, e.target.value)}
        />
      );
  }

  return (
    <div
      className={`form-field ${field.kind} ${error ? 'invalid' : ''} ${changed ? 'changed' : ''}`}
      data-field={field.name}
    >
      {field.kind === 'boolean' ? (
        <div className="checkbox-row">
          {control}
          <label htmlFor={id}>{field.label}</label>
        </div>
      ) : (
        <>
          <label htmlFor={id}>
            {field.label}
            {changed ? <span className="changed-dot" title="Changed" aria-label="(changed)" /> : null}
          </label>
          {control}
        </>
      )}
      {field.help ? (
        <p id={helpId} className="hint">
          <RichText text={field.help} />
        </p>
      ) : null}
      {field.maxLength !== undefined ? (
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

interface SecretFieldProps {
  name: string;
  label: string;
  state: string;
  stateTestId: string;
  value: string;
  error?: string;
  help: string;
  multiline?: boolean;
  onChange: (value: string) => void;
  onGenerate?: () => void;
}

/** A write-only secret: shows whether it is set, never its value; typing a new one replaces it. */
function SecretField(props: SecretFieldProps) {
  const { name, label, state, stateTestId, value, error, help, multiline, onChange, onGenerate } = props;
  const id = useId();
  const describedBy = `${id}-help${error ? ` ${id}-error` : ''}`;
  const common = {
    id,
    name,
    value,
    autoComplete: 'off',
    spellCheck: false,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  } as const;
  return (
    <div className={`form-field secret ${error ? 'invalid' : ''}`} data-field={name}>
      <div className="secret-head">
        <label htmlFor={id}>New {label.toLowerCase()}</label>
        <span className="secret-state">
          {label}:{' '}
          <Badge tone={state === 'not set' || state === '0 set' ? 'neutral' : 'ok'}>
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
