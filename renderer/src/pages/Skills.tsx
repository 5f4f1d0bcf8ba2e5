/**
 * The skills this agent publishes (issue 27): chat first (built in), then each skill on its own OpenClaw
 * agent, with its tool class, audience, limits, budget, use today and whether it serves; adding one (its
 * agent's config from a template), editing, pausing, removing (after a confirmation) and accepting a host
 * skill's tools (exactly those shown, asked again when they change). Reloads when the console says the
 * skills changed (`data.skillsVersion`) and every 30 s for their use today.
 */
import { useRef, useState } from 'react';
import type { SkillsResponse, SkillView } from '../api/contract';
import { Card } from '../components/Card';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { SkillCard } from '../components/SkillCard';
import { SkillForm, type SkillFormMode } from '../components/SkillForm';
import { ErrorNotice, Loading, Notice } from '../components/States';
import { useAction } from '../hooks/useAction';
import { useSkills } from '../hooks/useSkills';
import { formatDateTime } from '../lib/format';
import '../components/skills.css';
import type { PageProps } from './types';

type Pending = { kind: 'remove'; view: SkillView } | { kind: 'accept'; view: SkillView };
type Change = { id: string; run: () => Promise<SkillsResponse>; message: string };

export function Skills({ api, data }: PageProps) {
  const { view, error, apply } = useSkills(api, data.skillsVersion, 30_000);
  const [form, setForm] = useState<SkillFormMode | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const formHeading = useRef<HTMLDivElement>(null);

  const change = useRef<Change | null>(null);
  const [changing, setChanging] = useState<string | null>(null);
  const act = useAction(async () => {
    const next = change.current;
    if (!next) return undefined;
    const response = await next.run();
    apply(response);
    void data.refreshStatus();
    return next.message;
  });
  const run = async (next: Change) => {
    change.current = next;
    setChanging(next.id);
    setOutcome(null);
    const message = await act.run();
    if (message === undefined) return false;
    setOutcome(message);
    return true;
  };

  const openForm = (mode: SkillFormMode) => {
    setOutcome(null);
    setForm(mode);
    // The form opens above the list: take the keyboard there (focusable for this jump only).
    requestAnimationFrame(() => {
      const heading = formHeading.current?.querySelector<HTMLElement>('h2');
      if (!heading) return;
      heading.tabIndex = -1;
      heading.addEventListener('blur', () => heading.removeAttribute('tabindex'), { once: true });
      heading.scrollIntoView?.({ block: 'start' });
      heading.focus({ preventScroll: true });
    });
  };

  if (!view) {
    return (
      <div className="page skills" data-testid="skills-page">
        <h1 className="visually-hidden">Skills</h1>
        {error ? (
          <ErrorNotice error={error} title="Cannot load the skills" />
        ) : (
          <Loading label="Loading the skills…" />
        )}
      </div>
    );
  }

  const chat = view.skills.find((skill) => skill.builtIn);
  const agents = chat?.agent.available ?? [];
  const published = view.skills.filter((skill) => !skill.setting.paused);
  const publicCount = published.filter((skill) => skill.setting.audience === 'public').length;
  return (
    <div className="page skills" data-testid="skills-page">
      <h1 className="visually-hidden">Skills</h1>
      {error ? <ErrorNotice error={error} title="Showing the last known skills" /> : null}
      <Card
        title="Skills"
        testId="skills-intro"
        help={{ to: 'docs/console.md#skills', topic: 'skills' }}
        aside={
          form ? null : (
            <button type="button" className="button primary" onClick={() => openForm({ kind: 'add' })}>
              Add a skill
            </button>
          )
        }
      >
        <p className="muted">
          Each skill runs on its own OpenClaw agent, with the tools its callers may use: public skills have no
          tools or web tools only, sandboxed tools need callers you approved, and tools that reach this
          machine need callers named one by one and your acceptance.{' '}
          <span data-testid="skills-count">
            {published.length} published, {publicCount} public.
          </span>
        </p>
      </Card>
      {outcome ? <Notice tone="success" message={outcome} testId="skills-result" /> : null}
      {form ? (
        <div ref={formHeading}>
          <Card
            title={form.kind === 'add' ? 'Add a skill' : `Edit skill “${form.view.setting.name}”`}
            testId="skill-form-card"
            help={{ to: 'docs/console.md#skills', topic: 'adding a skill' }}
          >
            <SkillForm
              key={form.kind === 'add' ? 'add' : form.view.setting.id}
              api={api}
              mode={form}
              defaults={view.defaults}
              agents={agents}
              onSaved={(response, message) => {
                apply(response);
                void data.refreshStatus();
                setForm(null);
                setOutcome(message);
              }}
              onCancel={() => setForm(null)}
            />
          </Card>
        </div>
      ) : null}
      <div className="skills-list">
        {view.skills.map((skill) => (
          <SkillCard
            key={skill.setting.id}
            view={skill}
            busy={act.busy && changing === skill.setting.id}
            error={!act.busy && changing === skill.setting.id && !pending ? act.error : null}
            onEdit={() => openForm({ kind: 'edit', view: skill })}
            onPause={(paused) =>
              void run({
                id: skill.setting.id,
                run: () => api.editSkill(skill.setting.id, { paused }),
                message: paused
                  ? `Paused “${skill.setting.name}”: the cards no longer list it, and callers are told there is no such skill.`
                  : `Resumed “${skill.setting.name}”: the cards list it again.`,
              })
            }
            onRemove={() => {
              act.reset();
              setPending({ kind: 'remove', view: skill });
            }}
            onAccept={() => {
              act.reset();
              setPending({ kind: 'accept', view: skill });
            }}
          />
        ))}
      </div>

      <ConfirmDialog
        open={pending?.kind === 'remove'}
        title={pending ? `Remove the skill “${pending.view.setting.name}”?` : 'Remove the skill?'}
        confirmLabel="Remove"
        tone="danger"
        busy={act.busy}
        onCancel={() => setPending(null)}
        onConfirm={() => {
          if (!pending) return;
          const { setting } = pending.view;
          void run({
            id: setting.id,
            run: () => api.removeSkill(setting.id),
            message: `Removed “${setting.name}” (${setting.id}).`,
          }).then((done) => {
            if (done) setPending(null);
          });
        }}
      >
        <p>
          The cards stop listing it at once: A2A callers of its card get 404, SAMVAD callers are told there is
          no such skill. To stop it for a while instead, pause it.
        </p>
        <p>
          Keys and approvals that name it keep the name: a skill added later with the id{' '}
          <code>{pending?.view.setting.id}</code> opens to them again.
        </p>
        {act.error ? <ErrorNotice error={act.error} title="Not removed" /> : null}
      </ConfirmDialog>

      <ConfirmDialog
        open={pending?.kind === 'accept'}
        title={
          pending
            ? `Let the callers of “${pending.view.setting.name}” reach this machine?`
            : 'Accept its tools?'
        }
        confirmLabel="Accept these tools"
        tone="danger"
        busy={act.busy}
        onCancel={() => setPending(null)}
        onConfirm={() => {
          if (!pending) return;
          const { setting, tools } = pending.view;
          void run({
            id: setting.id,
            run: () => api.acceptSkill(setting.id, tools.tools),
            message: `Accepted “${setting.name}” with ${tools.tools.join(', ') || 'its tools'}: its named callers reach it.`,
          }).then((done) => {
            if (done) setPending(null);
          });
        }}
      >
        {pending?.kind === 'accept' ? <AcceptText view={pending.view} /> : null}
        {act.error ? <ErrorNotice error={act.error} title="Nothing was accepted" /> : null}
      </ConfirmDialog>
    </div>
  );
}

/** Exactly the tools accepted, and what they were when accepted before. */
function AcceptText({ view }: { view: SkillView }) {
  const { tools, acceptance, setting } = view;
  return (
    <>
      <p>
        Agent <code>{setting.agent}</code> is offered these tools, which reach this machine:
      </p>
      <p className="tool-list" data-testid="accept-tools">
        {tools.tools.length > 0 ? (
          tools.tools.map((tool) => <code key={tool}>{tool}</code>)
        ) : (
          <span className="muted">none named: it counts as host because its tools cannot be told</span>
        )}
      </p>
      {acceptance?.state === 'changed' ? (
        <p data-testid="accept-changed">
          You accepted it on {formatDateTime(acceptance.at)} with{' '}
          {acceptance.tools.length > 0 ? acceptance.tools.join(', ') : 'no tools named'}; they changed since.
        </p>
      ) : null}
      <p className="hint">{tools.detail}</p>
      <p>
        Every caller whose key or approval names “{setting.id}” can then ask it to use them, with your
        accounts and files. You accept these tools only: if they change, its callers are refused until you
        accept again.
      </p>
    </>
  );
}
