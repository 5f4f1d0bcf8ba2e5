import { useId, useState, type FormEvent, type ReactNode } from 'react';
import type { ApiRequestError } from '../api/client';

// agent://host[:port] or agent://[ipv6][:port], as src/protocol checks it; the console says more if not.
const AGENT_ID = /^agent:\/\/([A-Za-z0-9.-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?)$/;

interface AgentIdFormProps {
  label: string;
  placeholder: string;
  /** The button, and its text while busy. */
  action: string;
  busyAction: string;
  busy: boolean;
  help?: string;
  /** The console's answer to the last submit, shown with its fix. */
  error?: ApiRequestError | null;
  /** What is accepted (default: an agent:// id), and what to say of anything else. */
  accept?: { pattern: RegExp; message: string };
  /** Resolves true when done: the field is then emptied. */
  onSubmit: (agentId: string) => Promise<boolean>;
  /** More of what is sent, under the field (the skills of an approval). */
  children?: ReactNode;
}

/** One agent typed by the operator (approve in advance, allow a callee), checked before it is sent. */
export function AgentIdForm(props: AgentIdFormProps) {
  const { label, placeholder, action, busyAction, busy, help, error, onSubmit, children } = props;
  const accept = props.accept ?? {
    pattern: AGENT_ID,
    message: `An agent id looks like ${placeholder} (its host, with a port if not 443).`,
  };
  const id = useId();
  const [value, setValue] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const agentId = value.trim();
    if (!accept.pattern.test(agentId)) {
      setInvalid(accept.message);
      return;
    }
    setInvalid(null);
    if (await onSubmit(agentId)) setValue('');
  };
  const problem = invalid ?? (error ? error.message : null);
  const button = (
    <button type="submit" className="button" disabled={busy || value.trim() === ''}>
      {busy ? busyAction : action}
    </button>
  );
  const describedBy = [help ? `${id}-help` : '', problem ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <form className="advance-form" onSubmit={(event) => void submit(event)} noValidate>
      <label htmlFor={id}>{label}</label>
      <div className="token-row">
        <input
          id={id}
          type="text"
          spellCheck={false}
          autoComplete="off"
          placeholder={placeholder}
          value={value}
          aria-invalid={problem ? true : undefined}
          aria-describedby={describedBy || undefined}
          onChange={(event) => {
            setValue(event.target.value);
            setInvalid(null);
          }}
        />
        {children ? null : button}
      </div>
      {help ? (
        <p id={`${id}-help`} className="hint">
          {help}
        </p>
      ) : null}
      {problem ? (
        <p id={`${id}-error`} className="field-error" data-testid="field-error">
          {problem}
          {!invalid && error?.fix ? ` ${error.fix}` : ''}
        </p>
      ) : null}
      {children}
      {/* After what it sends, in reading and keyboard order. */}
      {children ? <div className="actions">{button}</div> : null}
    </form>
  );
}
