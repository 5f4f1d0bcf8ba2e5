/**
 * A key just issued, shown this once: the console keeps only a hash of it, so once this panel is closed (or
 * the page left) nobody can show it again. Focus moves here, so a screen reader hears it at once.
 */
import { useEffect, useId, useRef } from 'react';
import type { A2AKeyView } from '../api/contract';
import { CopyButton } from './CopyButton';

export function IssuedKey({
  name,
  secret,
  onDone,
}: Pick<A2AKeyView, 'name'> & { secret: string; onDone: () => void }) {
  const titleId = useId();
  const title = useRef<HTMLHeadingElement>(null);
  useEffect(() => title.current?.focus(), [secret]);
  const header = `Authorization: Bearer ${secret}`;
  return (
    <section className="issued-key" aria-labelledby={titleId} data-testid="issued-key">
      <h3 id={titleId} ref={title} tabIndex={-1}>
        The key for “{name}”
      </h3>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> Agent Bridge keeps only a hash of it; if it
        is lost, revoke it and issue another.
      </p>
      <div className="secret-line">
        <code data-testid="issued-secret">{secret}</code>
        <CopyButton value={secret} label="Copy the key" />
      </div>
      <p>
        Give it to the operator of that agent over a private channel. Their agent sends it with every A2A
        request, as this header:
      </p>
      <div className="secret-line">
        <code>{header}</code>
        <CopyButton value={header} label="Copy the header" />
      </div>
      <div className="actions">
        <button type="button" className="button" onClick={onDone}>
          Done: hide the key
        </button>
      </div>
    </section>
  );
}
