/**
 * The skills a caller may call (an A2A key's scope, a SAMVAD approval's): every public and approved skill
 * (no scope), or exactly the ones ticked. A skill for named callers only opens to a scope that names it, so
 * it is said beside it. Skill ids a scope names that are no longer skills stay listed (ticked) so the
 * operator sees them and can drop them; the console refuses a scope that names one.
 */
import { useId } from 'react';
import type { SkillView } from '../api/contract';
import { AUDIENCE_TITLES } from '../lib/skills';
import { Badge } from './Badge';
import './skill-scope.css';

interface SkillScopeProps {
  legend: string;
  /** The skills there are (chat first), or undefined while they load or cannot be read. */
  skills: readonly SkillView[] | undefined;
  /** undefined: every public and approved skill; else exactly these ids. */
  value: string[] | undefined;
  onChange: (value: string[] | undefined) => void;
  /** What is wrong with it: the console's words, or "choose one". */
  error?: string;
  disabled?: boolean;
}

export function SkillScope({ legend, skills, value, onChange, error, disabled }: SkillScopeProps) {
  const name = useId();
  const scoped = value !== undefined;
  const known = skills?.map((skill) => skill.setting.id) ?? [];
  // Named in the scope, not a skill now (removed since); unknown while the skills are not loaded.
  const gone = skills ? (value ?? []).filter((id) => !known.includes(id)) : (value ?? []);
  const toggle = (id: string, on: boolean) => {
    const next = new Set(value ?? []);
    if (on) next.add(id);
    else next.delete(id);
    // In the order the skills are listed, so the request and the row read the same.
    onChange([...known, ...gone].filter((each) => next.has(each)));
  };
  return (
    <fieldset
      className="skill-scope"
      data-testid="skill-scope"
      data-scoped={scoped}
      disabled={disabled}
      aria-describedby={error ? `${name}-error` : undefined}
    >
      <legend>{legend}</legend>
      <label className="checkbox-row">
        <input type="radio" name={`${name}-kind`} checked={!scoped} onChange={() => onChange(undefined)} />
        <span>Every public and approved skill</span>
      </label>
      <label className="checkbox-row">
        <input
          type="radio"
          name={`${name}-kind`}
          checked={scoped}
          disabled={!skills}
          onChange={() => onChange([])}
        />
        <span>Only these skills</span>
      </label>
      {scoped ? (
        <ul className="skill-scope-list" aria-label="Skills in the scope">
          {skills?.map((skill) => (
            <li key={skill.setting.id}>
              <label className="checkbox-row">
                <input
                  type="checkbox"
                  checked={value.includes(skill.setting.id)}
                  onChange={(event) => toggle(skill.setting.id, event.target.checked)}
                  aria-describedby={`${name}-${skill.setting.id}`}
                />
                <span>
                  {skill.setting.name} <code>{skill.setting.id}</code>
                </span>
              </label>
              <span id={`${name}-${skill.setting.id}`} className="hint skill-scope-audience">
                {AUDIENCE_TITLES[skill.setting.audience]}
                {skill.setting.audience === 'named' ? ': only a scope that names it opens it' : ''}
                {skill.setting.paused ? ' (paused)' : ''}
              </span>
            </li>
          ))}
          {gone.map((id) => (
            <li key={id}>
              <label className="checkbox-row">
                <input type="checkbox" checked onChange={(event) => toggle(id, event.target.checked)} />
                <span>
                  <code>{id}</code> {skills ? <Badge tone="warn">not a skill now</Badge> : null}
                </span>
              </label>
            </li>
          ))}
        </ul>
      ) : (
        <p className="hint">
          Unscoped, it opens every skill for the public and for approved callers; a skill for named callers
          only opens to a scope that names it.
        </p>
      )}
      {!skills ? (
        <p className="hint">The skills could not be loaded: only the unscoped choice is offered.</p>
      ) : null}
      {error ? (
        <p id={`${name}-error`} className="field-error" data-testid="skill-scope-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

/** The local check before a scope is sent: a scope of no skill opens nothing. */
export function scopeProblem(value: string[] | undefined): string | undefined {
  return value !== undefined && value.length === 0
    ? 'Tick at least one skill, or choose every public and approved skill.'
    : undefined;
}
