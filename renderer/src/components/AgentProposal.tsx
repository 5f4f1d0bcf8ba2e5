/**
 * A new skill's agent: the config its template proposes (to merge into OpenClaw's config file, which the
 * gateway applies without a restart), and what the agent is now beside what the template intends. "Check
 * again" asks the console anew; the snippet shown stays the one first proposed (the file changes under it
 * once merged). When the operator's own config gives the agent another class, it says so and why.
 */
import type { ApiRequestError } from '../api/client';
import type { SkillSnippetOutcome, SkillSnippetResponse } from '../api/contract';
import { CLASS_LABELS, CLASS_TONES } from '../lib/skills';
import { formatTime } from '../lib/format';
import { Badge } from './Badge';
import { Field } from './Card';
import { CopyButton } from './CopyButton';
import { ErrorNotice, Notice } from './States';

interface AgentProposalProps {
  /** The answer that proposed the config (its snippet is shown). */
  proposal: SkillSnippetResponse;
  /** The newest answer (after "Check again"): the agent as it is now. */
  latest: SkillSnippetResponse;
  checking: boolean;
  error: ApiRequestError | null;
  onCheckAgain: () => void;
}

const OUTCOME_TONES: Record<SkillSnippetOutcome['state'], 'success' | 'info' | 'warning' | 'error'> = {
  'not-applied': 'info',
  'not-loaded': 'warning',
  'as-intended': 'success',
  defeated: 'error',
  classified: 'info',
  unknown: 'warning',
};

const OUTCOME_TITLES: Record<SkillSnippetOutcome['state'], string> = {
  'not-applied': 'Not in your config yet',
  'not-loaded': 'The gateway does not run it yet',
  'as-intended': 'As the template intends',
  defeated: 'Your config defeated the template',
  classified: 'Its tools as they are',
  unknown: 'Cannot be checked from here',
};

export function AgentProposal({ proposal, latest, checking, error, onCheckAgain }: AgentProposalProps) {
  const { outcome, tools } = latest;
  return (
    <div className="agent-proposal" data-testid="agent-proposal" data-template={proposal.template}>
      {proposal.snippet ? (
        <div className="snippet">
          <div className="snippet-head">
            <span className="preview-label">
              Merge into <code data-testid="skill-merge-into">{proposal.mergeInto}</code> (the gateway applies
              it without a restart):
            </span>
            <CopyButton value={proposal.snippet} label="Copy the skill’s agent config" />
          </div>
          <pre className="preview snippet-code" data-testid="skill-snippet" tabIndex={0}>
            {proposal.snippet}
          </pre>
        </div>
      ) : null}
      {proposal.rosterNote ? <Notice tone="warning" message={proposal.rosterNote} /> : null}
      {proposal.snippet && proposal.declared ? (
        <Notice
          tone="warning"
          message={`Your config has an agent “${proposal.agent}” already: merging this changes its tools, and whatever else its entry sets stays. Check again shows what that makes it.`}
          testId="agent-exists"
        />
      ) : null}
      <dl className="fields compact" data-testid="skill-agent-class">
        {latest.expectedClass ? (
          <Field label="Intended">
            <span data-testid="intended-class" data-class={latest.expectedClass}>
              <Badge tone={CLASS_TONES[latest.expectedClass]}>{latest.expectedClass}</Badge>{' '}
              {CLASS_LABELS[latest.expectedClass]}
            </span>
          </Field>
        ) : null}
        <Field label="Now">
          <div className="skill-stack">
            <span data-testid="actual-class" data-class={tools.class}>
              <Badge tone={CLASS_TONES[tools.class]}>{tools.class}</Badge> {CLASS_LABELS[tools.class]}
            </span>
            {tools.tools.length > 0 ? (
              <span className="tool-list">
                {tools.tools.map((tool) => (
                  <code key={tool}>{tool}</code>
                ))}
              </span>
            ) : null}
            {tools.sandbox ? (
              <span className="hint">
                Sandbox: mode “{tools.sandbox.mode}”, workspace access “{tools.sandbox.workspaceAccess}”,
                network “{tools.sandbox.network}”
              </span>
            ) : null}
          </div>
        </Field>
      </dl>
      <div data-testid="skill-agent-outcome" data-state={outcome.state}>
        <Notice
          tone={OUTCOME_TONES[outcome.state]}
          title={OUTCOME_TITLES[outcome.state]}
          message={outcome.message}
        />
      </div>
      <div className="actions">
        <button type="button" className="button" onClick={onCheckAgain} disabled={checking}>
          {checking ? 'Checking…' : 'Check again'}
        </button>
        {latest.agentCheck.checkedAt && !checking ? (
          <span className="muted small" role="status">
            Checked {formatTime(latest.agentCheck.checkedAt)}
          </span>
        ) : null}
      </div>
      {error ? <ErrorNotice error={error} title="Could not check the agent" /> : null}
    </div>
  );
}
