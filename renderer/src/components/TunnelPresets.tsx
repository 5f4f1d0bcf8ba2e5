import { useId, useState, type KeyboardEvent } from 'react';
import type { ApiClient } from '../api/client';
import type { SettingsUpdateResponse, TunnelPresetView } from '../api/contract';
import { useAction } from '../hooks/useAction';
import { ErrorNotice, Notice } from './States';
import { HelpLink } from './HelpLink';
import { RichText } from './Text';

interface TunnelPresetsProps {
  api: ApiClient;
  presets: TunnelPresetView[];
  /** The settings after a preset was applied (the tunnel restarts with it at once). */
  onApplied: (response: SettingsUpdateResponse) => void;
}

/**
 * Stable-address providers as presets of the command tunnel: the agent keeps its id across restarts. The
 * console never sends a command line of its own: it names a preset and fills its fields, which the agent
 * checks (POST /api/tunnel/preset).
 */
export function TunnelPresets({ api, presets, onApplied }: TunnelPresetsProps) {
  const [chosen, setChosen] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [checked, setChecked] = useState(false);
  const id = useId();
  const preset = presets.find((candidate) => candidate.id === chosen);
  const invalid = preset ? preset.fields.filter((field) => !matches(field.pattern, values[field.name])) : [];
  const apply = useAction(async () => {
    if (!preset) return undefined;
    const filled = Object.fromEntries(preset.fields.map((field) => [field.name, values[field.name] ?? '']));
    const response = await api.applyTunnelPreset(preset.id, filled);
    onApplied(response);
    return response;
  });
  const submit = () => {
    setChecked(true);
    if (invalid.length === 0) void apply.run();
  };
  // Enter in a field applies the preset rather than saving the whole settings form around it.
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    submit();
  };
  if (presets.length === 0) return null;

  return (
    <div className="tunnel-presets" data-testid="tunnel-presets">
      <h3>A stable address</h3>
      <p className="muted small">
        localtunnel hands out another address when its server forgets yours, and your agent&apos;s id changes
        with it. With one of these, it keeps its address for good.{' '}
        <HelpLink to="docs/tunnels.md#an-address-that-never-changes" topic="what each preset needs" />
      </p>
      <div className="form-field select">
        <label htmlFor={`${id}-preset`}>Preset</label>
        <select
          id={`${id}-preset`}
          value={chosen}
          onChange={(event) => {
            setChosen(event.target.value);
            setChecked(false);
            apply.reset();
          }}
        >
          <option value="">Choose a provider…</option>
          {presets.map((candidate) => (
            <option key={candidate.id} value={candidate.id}>
              {candidate.label}
            </option>
          ))}
        </select>
      </div>
      {preset ? (
        <div className="tunnel-preset" data-testid="tunnel-preset" data-preset={preset.id}>
          <p className="small" data-testid="tunnel-preset-needs">
            <strong>Needs: </strong>
            <RichText text={preset.needs} />
          </p>
          <p className="small">
            The agent runs (<code>{'{port}'}</code> is its agent port):
          </p>
          <pre className="preview" data-testid="tunnel-preset-command">
            {fill(preset.command, values)}
          </pre>
          {preset.fields.map((field) => {
            const error =
              checked && invalid.includes(field) ? `${field.label}: like ${field.placeholder}` : '';
            return (
              <div className={`form-field text ${error ? 'invalid' : ''}`} key={field.name}>
                <label htmlFor={`${id}-${field.name}`}>{field.label}</label>
                <input
                  id={`${id}-${field.name}`}
                  type="text"
                  spellCheck={false}
                  autoComplete="off"
                  placeholder={field.placeholder}
                  value={values[field.name] ?? ''}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={`${id}-${field.name}-help`}
                  onKeyDown={onKeyDown}
                  onChange={(event) => setValues((v) => ({ ...v, [field.name]: event.target.value.trim() }))}
                />
                <p className="hint" id={`${id}-${field.name}-help`}>
                  <RichText text={field.help} />
                </p>
                {error ? (
                  <p className="field-error" role="alert" data-testid="field-error">
                    {error}
                  </p>
                ) : null}
              </div>
            );
          })}
          <div className="actions">
            <button type="button" className="button" onClick={submit} disabled={apply.busy}>
              {apply.busy ? 'Applying…' : `Use ${preset.label}`}
            </button>
          </div>
          {apply.error ? <ErrorNotice error={apply.error} title="Not applied" /> : null}
          {apply.result ? (
            <Notice tone="success" title="Applied" testId="tunnel-preset-applied">
              <p className="notice-message">
                The tunnel restarts with {preset.label}; its state shows on the Overview.
              </p>
            </Notice>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function matches(pattern: string, value: string | undefined): boolean {
  return value !== undefined && new RegExp(`^(?:${pattern})$`).test(value);
}

/** The command with what is typed so far in place of each field (the field's name while empty). */
function fill(command: string, values: Record<string, string>): string {
  return command.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name === 'port' ? whole : values[name] ? values[name] : whole,
  );
}
