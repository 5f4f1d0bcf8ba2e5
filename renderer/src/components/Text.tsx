import { Fragment } from 'react';

/**
 * Operator text from the core (diagnoses, fixes): `backticked` parts are setting names or commands, shown
 * as code so they can be read and copied exactly.
 */
export function RichText({ text }: { text: string }) {
  const parts = text.split(/`([^`]+)`/);
  return (
    <>
      {parts.map((part, index) =>
        index % 2 === 1 ? <code key={index}>{part}</code> : <Fragment key={index}>{part}</Fragment>,
      )}
    </>
  );
}
