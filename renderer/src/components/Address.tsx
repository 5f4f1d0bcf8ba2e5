import { Fragment } from 'react';

/**
 * Where an agent id or a URL may wrap: after `scheme://` and before each dot, colon, slash, query or fragment,
 * so a line ends between names (`agent://` | `58u6fkfh` | `.loca` | `.lt`), never inside one.
 */
export function addressPieces(value: string): string[] {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0] ?? '';
  const rest = value.slice(scheme.length);
  // An IPv6 host in brackets stays whole: its colons are not places to break.
  const host = rest.startsWith('[') ? rest.slice(0, rest.indexOf(']') + 1) : '';
  const pieces = rest
    .slice(host.length)
    .split(/(?=[.:/?#])/)
    .filter((piece) => piece !== '');
  return [scheme, host, ...pieces].filter((piece) => piece !== '');
}

interface AddressProps {
  value: string;
  testId?: string;
}

/** An agent id or URL, whole (its text is the value), that wraps only at the points `addressPieces` gives. */
export function Address({ value, testId }: AddressProps) {
  return (
    <code className="address" data-testid={testId} title={value}>
      {addressPieces(value).map((piece, index) => (
        <Fragment key={index}>
          {index > 0 ? <wbr /> : null}
          {piece}
        </Fragment>
      ))}
    </code>
  );
}
