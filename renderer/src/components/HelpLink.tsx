import { helpHref, type HelpReference } from '../help/docs';

/**
 * "Help" where a question arises: opens the help page that answers it, in the console itself
 * (`docs/tunnels.md#the-address-is-the-agents-id`). Its name says what about, for links read out of context.
 */
export function HelpLink({ to, topic }: { to: HelpReference; topic: string }) {
  return (
    <a
      className="help-link"
      href={helpHref(to)}
      aria-label={`Help: ${topic}`}
      title={`Help: ${topic}`}
      data-help={to}
    >
      <span aria-hidden="true" className="help-mark">
        ?
      </span>
      Help
    </a>
  );
}
