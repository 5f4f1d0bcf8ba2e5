/**
 * The Overview's A2A card: where A2A callers find this agent (its agent card's address, with a copy
 * button), and how many A2A keys can call it now, with the way to the Access page where keys are issued.
 */
import type { StatusResponse } from '../api/contract';
import { pageHref } from '../pages/types';
import { Address } from './Address';
import { Badge } from './Badge';
import { Card, Field } from './Card';
import { CopyButton } from './CopyButton';

export function A2ACard({ a2a }: { a2a: StatusResponse['a2a'] }) {
  return (
    <Card
      title="A2A"
      testId="a2a-card"
      help={{ to: 'docs/a2a.md', topic: 'the A2A network' }}
      aside={
        a2a.keys === null ? (
          <Badge tone="warn">keys unknown</Badge>
        ) : (
          <Badge tone={a2a.keys > 0 ? 'ok' : 'neutral'}>{keysLabel(a2a.keys)}</Badge>
        )
      }
    >
      <dl className="fields">
        <Field label="Agent card">
          {a2a.cardUrl ? (
            <span className="copyable">
              <Address value={a2a.cardUrl} testId="a2a-card-url" />
              <CopyButton value={a2a.cardUrl} label="Copy A2A agent card URL" />
            </span>
          ) : (
            <span className="muted" data-testid="a2a-card-url-none">
              No public address yet: start the tunnel or set a public URL, and A2A callers find the card
              there.
            </span>
          )}
        </Field>
        <Field label="Keys">
          <span data-testid="a2a-key-count" data-count={a2a.keys ?? 'unknown'}>
            {a2a.keys === null
              ? `Cannot tell which keys work now: ${a2a.keysProblem ?? 'the key store does not answer.'}`
              : a2a.keys === 0
                ? 'No live key: A2A callers need one the operator issued.'
                : `${keysLabel(a2a.keys)} can call this agent.`}
          </span>{' '}
          <a className="button small" href={pageHref('access')} data-testid="a2a-keys-link">
            {a2a.keys === 0 ? 'Issue a key' : 'Manage keys'}
          </a>
        </Field>
      </dl>
    </Card>
  );
}

function keysLabel(count: number): string {
  return `${count} live key${count === 1 ? '' : 's'}`;
}
