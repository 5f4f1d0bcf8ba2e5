import type { SkillAudience, ToolClass } from '../api/contract';
import { AUDIENCE_TEXTS, AUDIENCE_TITLES, AUDIENCES, audienceRefusal } from '../lib/skills';

interface AudienceChoiceProps {
  /** The radio group's name (unique on the page). */
  name: string;
  selected: SkillAudience;
  /** The class of the skill's agent as last checked; undefined until it has been. */
  toolClass: ToolClass | undefined;
  /** Why the class is not known yet (shown while every audience waits for it). */
  unknownText: string;
  /** Why the class may not be the one meant yet (a template's agent not merged or not loaded). */
  note?: string;
  error?: string;
  onChoose: (audience: SkillAudience) => void;
}

/**
 * Who may call a skill, as radios: only the audiences its agent's class allows are offered (the console
 * refuses the others whatever is sent); each one that is not says why.
 */
export function AudienceChoice({
  name,
  selected,
  toolClass,
  unknownText,
  note,
  error,
  onChoose,
}: AudienceChoiceProps) {
  return (
    <fieldset
      className="policy-options audience-options"
      data-testid="audience-choice"
      aria-describedby={error ? `${name}-error` : undefined}
    >
      <legend className="skill-form-legend">Who may call it</legend>
      {toolClass === undefined ? (
        <p className="hint" data-testid="audience-unknown">
          {unknownText}
        </p>
      ) : note ? (
        <p className="hint" data-testid="audience-note">
          {note}
        </p>
      ) : null}
      {AUDIENCES.map((audience) => {
        const refusal = toolClass === undefined ? unknownText : audienceRefusal(audience, toolClass);
        const disabled = refusal !== undefined;
        return (
          <label
            key={audience}
            className={`policy-option ${audience === selected && !disabled ? 'selected' : ''} ${disabled ? 'disabled' : ''}`}
            data-testid={`audience-${audience}`}
            data-disabled={disabled}
          >
            <input
              type="radio"
              name={name}
              value={audience}
              checked={audience === selected && !disabled}
              disabled={disabled}
              aria-labelledby={`${name}-${audience}`}
              aria-describedby={`${name}-${audience}-text${disabled && toolClass ? ` ${name}-${audience}-why` : ''}`}
              onChange={() => onChoose(audience)}
            />
            <span className="policy-text">
              <span className="policy-title">
                <span id={`${name}-${audience}`}>{AUDIENCE_TITLES[audience]}</span>
              </span>
              <span id={`${name}-${audience}-text`} className="hint">
                {AUDIENCE_TEXTS[audience]}
              </span>
              {disabled && toolClass ? (
                <span id={`${name}-${audience}-why`} className="hint why-disabled" data-testid="audience-why">
                  {refusal}
                </span>
              ) : null}
            </span>
          </label>
        );
      })}
      {error ? (
        <p id={`${name}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
