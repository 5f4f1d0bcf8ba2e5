import { useId, type ReactNode } from 'react';
import type { HelpReference } from '../help/docs';
import { HelpLink } from './HelpLink';

interface CardProps {
  title: string;
  /** Right side of the title bar: a state badge or actions. */
  aside?: ReactNode;
  children: ReactNode;
  testId?: string;
  className?: string;
  /** The help page that answers this card's question, and what about (the link's name). */
  help?: { to: HelpReference; topic: string };
}

/** A titled section; its title names it for assistive technology (a region landmark). */
export function Card({ title, aside, children, testId, className, help }: CardProps) {
  const titleId = useId();
  return (
    <section className={`card ${className ?? ''}`} data-testid={testId} aria-labelledby={titleId}>
      <header className="card-header">
        <h2 id={titleId}>{title}</h2>
        {aside || help ? (
          <div className="card-aside">
            {aside}
            {help ? <HelpLink to={help.to} topic={help.topic} /> : null}
          </div>
        ) : null}
      </header>
      <div className="card-body">{children}</div>
    </section>
  );
}

/** A definition list row: label and value. */
export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="field-row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
