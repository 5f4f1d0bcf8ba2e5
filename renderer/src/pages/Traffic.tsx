import { useCallback, useDeferredValue, useId, useMemo, useState } from 'react';
import { PIPELINE_STEPS, type TrafficEntry } from '../api/contract';
import { Badge } from '../components/Badge';
import { ErrorNotice, EmptyState, Loading } from '../components/States';
import { TrafficDetails } from '../components/TrafficDetails';
import { VerdictBadge } from '../components/VerdictBadge';
import { VirtualList } from '../components/VirtualList';
import { useAction } from '../hooks/useAction';
import { useSkills } from '../hooks/useSkills';
import { formatBytes, formatCount, formatMs, formatTime } from '../lib/format';
import { EMPTY_FILTER, filterTraffic, isValidStatusFilter, type TrafficFilterForm } from '../traffic/filter';
import { keyName, unknownCaller } from '../traffic/caller';
import { TRAFFIC_LIMIT } from '../traffic/log';
import type { PageProps } from './types';

export const ROW_HEIGHT = 36;
const MAX_SUGGESTIONS = 200;
// A skill id is at most 64 characters (SAMVAD's envelope schema); a caller's longer text is no suggestion.
const MAX_SKILL_LENGTH = 64;

export function Traffic({ api, data }: PageProps) {
  const { traffic, trafficError, pause, resume, status } = data;
  // The skills published, offered in the skill filter before any call to them has come.
  const skills = useSkills(api, data.skillsVersion).view?.skills;
  const published = useMemo(() => skills?.map((skill) => skill.setting.id) ?? [], [skills]);
  const [filter, setFilter] = useState<TrafficFilterForm>(EMPTY_FILTER);
  // Typing stays responsive: the 10,000-row filter runs at a lower priority than the keystroke.
  const deferredFilter = useDeferredValue(filter);
  const filtered = useMemo(
    () => filterTraffic(traffic.entries, deferredFilter),
    [traffic.entries, deferredFilter],
  );
  const [selected, setSelected] = useState<TrafficEntry | null>(null);
  const selectedIndex = useMemo(
    () => (selected ? filtered.findIndex((entry) => entry.id === selected.id) : -1),
    [filtered, selected],
  );
  const onSelectIndex = useCallback((index: number) => setSelected(filtered[index] ?? null), [filtered]);
  const filtering = Object.values(filter).some((value) => value.trim() !== '');

  const exportLog = useAction(async () => {
    const file = await api.exportTraffic();
    download(file.blob, file.filename);
  });

  if (!traffic.loaded && !trafficError) return <Loading label="Loading the traffic log…" />;

  const agentUrl = status?.agent.url;
  return (
    <div className="page traffic">
      <h1 className="visually-hidden">Traffic</h1>
      <Filters filter={filter} onChange={setFilter} entries={traffic.entries} published={published} />
      <div className="toolbar">
        <p className="toolbar-count" role="status" data-testid="traffic-count">
          {filtering
            ? `${formatCount(filtered.length)} of ${formatCount(traffic.entries.length)} calls`
            : `${formatCount(traffic.entries.length)} call${traffic.entries.length === 1 ? '' : 's'}`}
          {traffic.entries.length >= TRAFFIC_LIMIT
            ? ` (the newest ${formatCount(TRAFFIC_LIMIT)} are kept here)`
            : ''}
          {traffic.paused ? (
            <span className="paused-note" data-testid="paused-count">
              {' '}
              · Paused: {formatCount(traffic.pendingCount)} new
            </span>
          ) : null}
        </p>
        <div className="actions">
          {filtering ? (
            <button type="button" className="button ghost" onClick={() => setFilter(EMPTY_FILTER)}>
              Clear filters
            </button>
          ) : null}
          <button
            type="button"
            className={`button ${traffic.paused ? 'primary' : ''}`}
            aria-pressed={traffic.paused}
            onClick={traffic.paused ? resume : pause}
          >
            {traffic.paused
              ? `Resume${traffic.pendingCount > 0 ? ` (${formatCount(traffic.pendingCount)} new)` : ''}`
              : 'Pause'}
          </button>
          <button
            type="button"
            className="button"
            onClick={() => void exportLog.run()}
            disabled={exportLog.busy}
            title="Download the console's traffic log as JSON lines"
          >
            {exportLog.busy ? 'Exporting…' : 'Export'}
          </button>
        </div>
      </div>
      {exportLog.error ? <ErrorNotice error={exportLog.error} title="Export failed" /> : null}
      {trafficError ? <ErrorNotice error={trafficError} title="Cannot load the traffic log" /> : null}

      <div className={`traffic-split ${selected ? 'with-details' : ''}`}>
        <div className="traffic-table">
          {!traffic.loaded ? null : traffic.entries.length === 0 ? (
            <EmptyState title="No calls yet">
              <p>
                Send one with the self-test (Overview → <strong>Test</strong>), or from another agent: over
                SAMVAD to <code>{agentUrl ? `${agentUrl}/agent/message` : '/agent/message'}</code>, or over
                A2A to <code>{agentUrl ? `${agentUrl}/a2a/jsonrpc` : '/a2a/jsonrpc'}</code>. Each call appears
                here the moment it is handled, with why it was accepted or refused.
              </p>
            </EmptyState>
          ) : filtered.length === 0 ? (
            <EmptyState title="No calls match these filters">
              <button type="button" className="button" onClick={() => setFilter(EMPTY_FILTER)}>
                Clear filters
              </button>
            </EmptyState>
          ) : (
            <TrafficTable entries={filtered} selectedIndex={selectedIndex} onSelectIndex={onSelectIndex} />
          )}
        </div>
        {selected ? <TrafficDetails entry={selected} onClose={() => setSelected(null)} /> : null}
      </div>
    </div>
  );
}

interface TrafficTableProps {
  entries: readonly TrafficEntry[];
  selectedIndex: number;
  onSelectIndex: (index: number) => void;
  fallbackHeight?: number;
}

export function TrafficTable({ entries, selectedIndex, onSelectIndex, fallbackHeight }: TrafficTableProps) {
  return (
    <VirtualList
      label="Calls, newest first"
      items={entries}
      rowHeight={ROW_HEIGHT}
      fallbackHeight={fallbackHeight}
      getKey={(entry) => entry.id}
      rowId={(index) => `traffic-row-${entries[index]?.id ?? index}`}
      selectedIndex={selectedIndex}
      onSelectIndex={onSelectIndex}
      className="traffic-grid"
      header={
        <div role="rowgroup" className="traffic-head">
          <div role="row" className="traffic-row head" aria-rowindex={1}>
            <span role="columnheader">Time</span>
            <span
              role="columnheader"
              title="in: the sender of a call to this agent; out: the agent yours called"
            >
              Agent
            </span>
            <span role="columnheader">Protocol</span>
            <span role="columnheader">Skill</span>
            <span role="columnheader" className="col-mode">
              Mode
            </span>
            <span role="columnheader">Verdict</span>
            <span role="columnheader" className="num">
              Status
            </span>
            <span role="columnheader" className="num">
              Duration
            </span>
            <span role="columnheader" className="num col-bytes">
              In / out
            </span>
          </div>
        </div>
      }
      renderRow={(entry, index, isSelected) => (
        <div
          role="row"
          id={`traffic-row-${entry.id}`}
          className={`traffic-row ${entry.verdict === 'accepted' ? 'accepted' : 'refused'} ${isSelected ? 'selected' : ''}`}
          aria-rowindex={index + 2}
          aria-selected={isSelected}
          data-testid="traffic-row"
          data-entry-id={entry.id}
          data-verdict={entry.verdict}
          data-direction={directionOf(entry)}
          data-protocol={entry.protocol ?? 'samvad'}
        >
          <span role="gridcell" className="mono">
            {formatTime(entry.time)}
          </span>
          <span role="gridcell" className="agent-cell" title={agentTitle(entry)}>
            <DirectionBadge entry={entry} />
            {keyName(entry) ? (
              <KeyCaller entry={entry} />
            ) : (
              <AgentText id={agentOf(entry)} unknown={unknownCaller(entry)} />
            )}
          </span>
          <span role="gridcell">
            <ProtocolBadge entry={entry} />
          </span>
          <span
            role="gridcell"
            className="ellipsis"
            data-testid="traffic-skill"
            title={entry.skill?.slice(0, MAX_SKILL_LENGTH * 4)}
          >
            {entry.skill ?? '—'}
          </span>
          <span role="gridcell" className="col-mode">
            {entry.mode ?? '—'}
          </span>
          <span role="gridcell">
            <VerdictBadge verdict={entry.verdict} held={entry.held} />
          </span>
          <span role="gridcell" className="num mono">
            {entry.status}
          </span>
          <span role="gridcell" className="num mono">
            {formatMs(entry.durationMs)}
          </span>
          <span role="gridcell" className="num mono col-bytes">
            {formatBytes(entry.bytesIn)} / {formatBytes(entry.bytesOut)}
          </span>
        </div>
      )}
    />
  );
}

/** The protocol a call spoke; entries from before protocols were logged are SAMVAD's. */
export function ProtocolBadge({ entry }: { entry: TrafficEntry }) {
  const protocol = entry.protocol ?? 'samvad';
  return (
    <span className={`protocol ${protocol}`} data-testid="protocol-badge" data-protocol={protocol}>
      {protocol === 'a2a' ? 'A2A' : 'SAMVAD'}
    </span>
  );
}

/** `out`: a call the operator's agent made through the bridge; anything else is a call to this agent. */
export function directionOf(entry: TrafficEntry): 'in' | 'out' {
  return entry.direction === 'out' ? 'out' : 'in';
}

/** The other agent of the entry: the sender of a call in, the callee of a call out. */
function agentOf(entry: TrafficEntry): string | undefined {
  return directionOf(entry) === 'out' ? entry.callee : entry.sender;
}

function agentTitle(entry: TrafficEntry): string | undefined {
  const name = keyName(entry);
  if (!name) return agentOf(entry);
  return `${entry.sender} (key “${name}”${entry.keyStatus ? `, ${entry.keyStatus}` : ''})`;
}

/** An A2A key's caller: its name first, then its id; a revoked or expired key is marked so. */
function KeyCaller({ entry }: { entry: TrafficEntry }) {
  return (
    <>
      <span className="agent-text" data-testid="traffic-agent">
        {keyName(entry)} <span className="muted">{entry.sender}</span>
      </span>
      {entry.keyStatus ? (
        <span data-testid="traffic-key-status" data-status={entry.keyStatus}>
          <Badge tone="bad">{entry.keyStatus}</Badge>
        </span>
      ) : null}
    </>
  );
}

/**
 * The agent in a row, without its `agent://` (every row has it; the title and the details show the whole id),
 * so a narrow column keeps the host and port, ending in … only when even those do not fit.
 */
function AgentText({ id, unknown }: { id: string | undefined; unknown: string }) {
  if (!id) return <span className="muted">{unknown}</span>;
  const scheme = id.startsWith('agent://') ? 'agent://' : '';
  return (
    <span className="agent-text" data-testid="traffic-agent">
      {scheme ? <span className="agent-scheme">{scheme}</span> : null}
      {id.slice(scheme.length)}
    </span>
  );
}

export function DirectionBadge({ entry }: { entry: TrafficEntry }) {
  const direction = directionOf(entry);
  return (
    <span
      className={`direction ${direction}`}
      data-testid="direction-badge"
      data-direction={direction}
      title={direction === 'out' ? 'Out: your agent called this agent' : 'In: this agent called yours'}
    >
      <span aria-hidden="true">{direction === 'out' ? '↗' : '↘'}</span>
      <span className="visually-hidden">{direction === 'out' ? 'out to' : 'in from'}</span>
    </span>
  );
}

interface FiltersProps {
  filter: TrafficFilterForm;
  onChange: (filter: TrafficFilterForm) => void;
  entries: readonly TrafficEntry[];
  /** The skill ids this agent publishes (chat first), suggested before the ones calls named. */
  published: readonly string[];
}

function Filters({ filter, onChange, entries, published }: FiltersProps) {
  const id = useId();
  const suggestions = useMemo(() => {
    const senders = new Set<string>();
    // Callers may name skills that do not exist: those come after the published ones.
    const skills = new Set<string>(published);
    for (const entry of entries) {
      if (entry.direction !== 'out' && entry.sender && senders.size < MAX_SUGGESTIONS)
        senders.add(entry.sender);
      if (entry.skill && entry.skill.length <= MAX_SKILL_LENGTH && skills.size < MAX_SUGGESTIONS)
        skills.add(entry.skill);
    }
    const seen = [...skills].slice(published.length).sort();
    return { senders: [...senders].sort(), skills: [...published, ...seen] };
  }, [entries, published]);
  const set = (name: keyof TrafficFilterForm) => (value: string) => onChange({ ...filter, [name]: value });
  const statusInvalid = filter.status.trim() !== '' && !isValidStatusFilter(filter.status);

  return (
    <form
      className="filters"
      role="search"
      aria-label="Filter calls"
      onSubmit={(event) => event.preventDefault()}
    >
      <div className="filter grow">
        <label htmlFor={`${id}-text`}>Search</label>
        <input
          id={`${id}-text`}
          type="search"
          value={filter.text}
          placeholder="agent, skill, code, message, trace id…"
          onChange={(event) => set('text')(event.target.value)}
        />
      </div>
      <div className="filter narrow">
        <label htmlFor={`${id}-direction`}>Direction</label>
        <select
          id={`${id}-direction`}
          data-testid="direction-filter"
          value={filter.direction}
          onChange={(event) => set('direction')(event.target.value)}
        >
          <option value="">in and out</option>
          <option value="in">in: calls to this agent</option>
          <option value="out">out: calls your agent made</option>
        </select>
      </div>
      <div className="filter narrow">
        <label htmlFor={`${id}-protocol`}>Protocol</label>
        <select
          id={`${id}-protocol`}
          data-testid="protocol-filter"
          value={filter.protocol}
          onChange={(event) => set('protocol')(event.target.value)}
        >
          <option value="">all</option>
          <option value="samvad">SAMVAD</option>
          <option value="a2a">A2A</option>
        </select>
      </div>
      <div className="filter">
        <label htmlFor={`${id}-sender`}>Sender</label>
        <input
          id={`${id}-sender`}
          list={`${id}-senders`}
          value={filter.sender}
          placeholder="agent://…"
          onChange={(event) => set('sender')(event.target.value)}
        />
        <datalist id={`${id}-senders`}>
          {suggestions.senders.map((sender) => (
            <option key={sender} value={sender} />
          ))}
        </datalist>
      </div>
      <div className="filter narrow">
        <label htmlFor={`${id}-skill`}>Skill</label>
        <input
          id={`${id}-skill`}
          list={`${id}-skills`}
          value={filter.skill}
          onChange={(event) => set('skill')(event.target.value)}
        />
        <datalist id={`${id}-skills`}>
          {suggestions.skills.map((skill) => (
            <option key={skill} value={skill} />
          ))}
        </datalist>
      </div>
      <div className="filter narrow">
        <label htmlFor={`${id}-verdict`}>Verdict</label>
        <select
          id={`${id}-verdict`}
          value={filter.verdict}
          onChange={(event) => set('verdict')(event.target.value)}
        >
          <option value="">any</option>
          <option value="accepted">accepted</option>
          <option value="refused">refused (any)</option>
          {PIPELINE_STEPS.map((step) => (
            <option key={step} value={step}>
              refused at {step}
            </option>
          ))}
        </select>
      </div>
      <div className="filter narrow">
        <label htmlFor={`${id}-status`}>Status</label>
        <input
          id={`${id}-status`}
          value={filter.status}
          placeholder="401 or 4xx"
          inputMode="numeric"
          aria-invalid={statusInvalid || undefined}
          aria-describedby={statusInvalid ? `${id}-status-error` : undefined}
          onChange={(event) => set('status')(event.target.value)}
        />
        {statusInvalid ? (
          <span id={`${id}-status-error`} className="field-error">
            A code like 401 or a class like 4xx
          </span>
        ) : null}
      </div>
    </form>
  );
}

function download(blob: Blob, filename: string) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.className = 'offscreen';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
