import { Badge } from './Badge';

export interface PolicyOption<T extends string> {
  value: T;
  title: string;
  /** One sentence on what it means, the radio's description. */
  text: string;
}

interface PolicyChoiceProps<T extends string> {
  /** The radio group's name (unique on the page). */
  name: string;
  legend: string;
  options: readonly PolicyOption<T>[];
  selected: T;
  /** The saved value, marked "current". */
  current: T;
  /** `data-testid` of each option: `${testIdPrefix}-${value}`. */
  testIdPrefix: string;
  onChoose: (value: T) => void;
}

/**
 * A policy as a group of radios with a sentence each (the access policy, the outbound policy). Each radio is
 * named by its title alone, a short name to find it by, and described by its sentence.
 */
export function PolicyChoice<T extends string>(props: PolicyChoiceProps<T>) {
  const { name, legend, options, selected, current, testIdPrefix, onChoose } = props;
  return (
    <fieldset className="policy-options">
      <legend className="visually-hidden">{legend}</legend>
      {options.map((option) => (
        <label
          key={option.value}
          className={`policy-option ${option.value === selected ? 'selected' : ''}`}
          data-testid={`${testIdPrefix}-${option.value}`}
        >
          <input
            type="radio"
            name={name}
            value={option.value}
            checked={option.value === selected}
            aria-labelledby={`${name}-${option.value}`}
            aria-describedby={`${name}-${option.value}-text`}
            onChange={() => onChoose(option.value)}
          />
          <span className="policy-text">
            <span className="policy-title">
              <span id={`${name}-${option.value}`}>{option.title}</span>
              {option.value === current ? <Badge tone="info">current</Badge> : null}
            </span>
            <span id={`${name}-${option.value}-text`} className="hint">
              {option.text}
            </span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}
