import { useId, type ReactNode } from 'react';

interface CardProps {
  title: string;
  /** Right side of the title bar: a state badge or actions. */
  aside?: ReactNode;
  children: ReactNode;
  testId?: string;
  className?: string;
}

/** A titled section; its title names it for assistive technology (a region landmark). */
export function Card({ title, aside, children, testId, className }: CardProps) {
  const titleId = useId();
  return (
    <section className={`card ${className ?? ''}`} data-testid={testId} aria-labelledby={titleId}>
      <header className="card-header">
        <h2 id={titleId}>{title}</h2>
        {aside ? <div className="card-aside">{aside}</div> : null}
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
