import type { A2ATrafficDetail, TrafficEntry, TrafficFile } from '../api/contract';
import { formatBytes, formatDateTime, formatMs } from '../lib/format';
import { unknownCaller } from '../traffic/caller';
import { outboundSteps } from '../traffic/outbound';
import {
  ADMISSION_LABELS,
  NOT_RECORDED,
  notRecorded,
  verificationSteps,
  type StepState,
} from '../traffic/steps';
import { pageHref } from '../pages/types';
import { Address } from './Address';
import { Badge } from './Badge';
import { Field } from './Card';
import { Notice } from './States';
import { VerdictBadge } from './VerdictBadge';

interface TrafficDetailsProps {
  entry: TrafficEntry;
  onClose: () => void;
}

const STEP_ICONS: Record<StepState, string> = { pass: '✓', fail: '✕', held: '…', warn: '!', 'not-run': '–' };
const STEP_WORDS: Record<StepState, string> = {
  pass: 'passed',
  fail: 'failed',
  held: 'held',
  warn: 'accepted, unchecked',
  'not-run': 'not run',
};

/** What the details say of an outbound reply's signature (Traffic's `verified`, `unsigned`, `failed`). */
const REPLY_SIGNATURE: Record<NonNullable<TrafficEntry['replySignature']> | 'none', string> = {
  verified: 'verified against its card',
  unsigned: 'unsigned: this agent’s software does not sign replies (used as received from its host)',
  failed: 'did NOT verify: the reply was discarded',
  none: 'not checked',
};

/** One call (SAMVAD or A2A, in or out): what was answered first, then why it was accepted or refused, step by step. */
export function TrafficDetails({ entry, onClose }: TrafficDetailsProps) {
  const out = entry.direction === 'out';
  // A call out went through the operator's outbound policy and the other agent, not the receive pipeline.
  const steps = out
    ? outboundSteps(entry).map(({ id, ...step }) => ({ ...step, step: id }))
    : verificationSteps(entry);
  return (
    <aside
      className="details"
      aria-label="Call details"
      data-testid="traffic-details"
      data-entry-id={entry.id}
      data-direction={out ? 'out' : 'in'}
    >
      <header className="details-header">
        <h2>
          Call #{entry.id} <VerdictBadge verdict={entry.verdict} held={entry.held} />
        </h2>
        <button type="button" className="button small ghost" onClick={onClose} aria-label="Close details">
          ✕
        </button>
      </header>

      <section aria-labelledby="details-response">
        <h3 id="details-response">Response</h3>
        <dl className="fields compact">
          <Field label="Status">
            <Badge tone={entry.status < 400 ? 'ok' : entry.status < 500 ? 'warn' : 'bad'}>
              {entry.status}
            </Badge>
            {entry.code ? <code className="code-chip">{entry.code}</code> : null}
          </Field>
          {entry.message ? <Field label="Message">{entry.message}</Field> : null}
          <Field label="Duration">{formatMs(entry.durationMs)}</Field>
          <Field label="Bytes">
            {formatBytes(entry.bytesIn)} in · {formatBytes(entry.bytesOut)} out
          </Field>
          {entry.taskId ? (
            <Field label="Task">
              <code>{entry.taskId}</code>
            </Field>
          ) : null}
          {entry.admittedBy ? (
            <Field label="Admitted as">
              <span data-testid="admitted-by" data-rule={entry.admittedBy}>
                {ADMISSION_LABELS[entry.admittedBy]}
              </span>
            </Field>
          ) : null}
          {entry.held ? (
            <Field label="Held">
              <span data-testid="held-note">
                Yes: the task waits until you approve or deny its sender on the{' '}
                <a href={pageHref('access')}>Access page</a>.
              </span>
            </Field>
          ) : null}
          {entry.screen ? (
            <Field label="Injection screen">
              <span data-testid="screen-rule">
                matched rule <code>{entry.screen.rule}</code>
                {entry.verdict === 'input' ? ': refused' : ': flagged, let through'}
              </span>
            </Field>
          ) : null}
        </dl>
      </section>

      {entry.diagnosis ? (
        <Notice tone="error" title="Diagnosis" message={entry.diagnosis} testId="traffic-diagnosis" />
      ) : null}

      <section aria-labelledby="details-steps">
        <h3 id="details-steps">{out ? 'Call out' : 'Checks'}</h3>
        {!out && notRecorded(entry) ? (
          <p className="muted small" data-testid="steps-not-recorded">
            {NOT_RECORDED}
          </p>
        ) : null}
        <ol className="step-list">
          {steps.map((step) => (
            <li
              key={step.step}
              className={`step ${step.state}`}
              data-testid="verification-step"
              data-step={step.step}
              data-state={step.state}
            >
              <span className="step-icon" aria-hidden="true">
                {STEP_ICONS[step.state]}
              </span>
              <span className="step-text">
                <span className="step-label">
                  {step.label}
                  <span className="step-name"> ({step.step})</span>
                </span>
                <span className="step-state">{STEP_WORDS[step.state]}</span>
                {step.detail ? <span className="step-detail">{step.detail}</span> : null}
              </span>
            </li>
          ))}
        </ol>
      </section>

      <section aria-labelledby="details-call">
        <h3 id="details-call">Call</h3>
        <dl className="fields compact">
          <Field label="Time">{formatDateTime(entry.time)}</Field>
          <Field label="Direction">
            <span data-testid="details-direction" data-direction={out ? 'out' : 'in'}>
              {out ? 'out: your agent called another agent (MCP)' : 'in: a call to this agent'}
            </span>
          </Field>
          <Field label="Protocol">
            <span data-testid="details-protocol" data-protocol={entry.protocol ?? 'samvad'}>
              {entry.protocol === 'a2a' ? 'A2A' : 'SAMVAD'}
            </span>
          </Field>
          {entry.a2a ? <A2AFields detail={entry.a2a} /> : null}
          {out ? (
            <>
              <Field label="Called">{entry.callee ? <Address value={entry.callee} /> : 'unknown'}</Field>
              {/* A2A replies carry no signatures: there is nothing to say of one. */}
              {entry.protocol === 'a2a' ? null : (
                <Field label="Reply signature">
                  <span data-testid="reply-signature" data-signature={entry.replySignature ?? 'none'}>
                    {REPLY_SIGNATURE[entry.replySignature ?? 'none']}
                  </span>
                </Field>
              )}
            </>
          ) : null}
          <Field label="Endpoint">
            <code>{entry.endpoint}</code>
          </Field>
          <Field label={out ? 'Sent as' : 'Sender'}>
            {entry.sender ? <Address value={entry.sender} /> : unknownCaller(entry)}
            {entry.callerName ? <span data-testid="caller-name"> (key “{entry.callerName}”)</span> : null}
            {entry.keyStatus ? (
              <span data-testid="key-status" data-status={entry.keyStatus}>
                {' '}
                <Badge tone="bad">{entry.keyStatus}</Badge> Its holder still calls with this key:{' '}
                {entry.keyStatus === 'revoked' ? 'ask them to stop, or issue' : 'issue'} them a new one on the{' '}
                <a href={pageHref('access')}>Access page</a>
                {entry.keyStatus === 'expired' ? ' if they should call' : ''}.
              </span>
            ) : null}
          </Field>
          {entry.onBehalfOf ? (
            <Field label="On behalf of">
              <span data-testid="on-behalf-of">
                <code>{entry.onBehalfOf}</code> (its delegation token verified)
              </span>
            </Field>
          ) : null}
          {entry.chain ? (
            <Field label="Chain of calls">
              <span data-testid="call-chain" data-hop={entry.chain.hop}>
                hop {entry.chain.hop} of <code>{entry.chain.id}</code>
                {out ? ' (sent with the call)' : ' (as the caller said)'}
              </span>
            </Field>
          ) : null}
          <Field label="Skill">{entry.skill ?? '—'}</Field>
          <Field label="Mode">{entry.mode ?? '—'}</Field>
          <Field label="Signature">{entry.signatureForm}</Field>
          <Field label="Trace id">{entry.traceId ? <code>{entry.traceId}</code> : '—'}</Field>
          {out ? null : (
            <Field label="Forwarded for">
              {entry.forwardedFor ? <code>{entry.forwardedFor}</code> : '—'}
            </Field>
          )}
        </dl>
      </section>

      <section aria-labelledby="details-contents">
        <h3 id="details-contents">Contents</h3>
        {entry.files?.length ? <FileList files={entry.files} /> : null}
        {entry.preview ? (
          <>
            {entry.preview.payload !== undefined ? (
              <>
                <p className="preview-label">Payload</p>
                <pre className="preview">{entry.preview.payload}</pre>
              </>
            ) : null}
            {entry.preview.reply !== undefined ? (
              <>
                <p className="preview-label">Reply</p>
                <pre className="preview">{entry.preview.reply}</pre>
              </>
            ) : null}
          </>
        ) : (
          <p className="muted small">
            Not kept: turn on “Keep message contents” in Settings → Privacy to see a preview of new messages.
          </p>
        )}
      </section>
    </aside>
  );
}

/** The files and data parts a call carried: names, types and sizes (escaped by the agent), never the bytes. */
function FileList({ files }: { files: TrafficFile[] }) {
  return (
    <>
      <p className="preview-label">Files</p>
      <ul className="file-list" data-testid="traffic-files">
        {files.map((file, index) => (
          <li key={index} data-testid="traffic-file">
            <code>{file.name || '(unnamed)'}</code> {file.type || 'no type'},{' '}
            {file.fetched
              ? file.bytes > 0
                ? `${formatBytes(file.bytes)} fetched from a URL`
                : 'by URL, not fetched'
              : formatBytes(file.bytes)}
          </li>
        ))}
      </ul>
    </>
  );
}

const A2A_TRANSPORT: Record<A2ATrafficDetail['transport'], string> = {
  jsonrpc: 'JSON-RPC',
  rest: 'HTTP+JSON',
};

/** What an A2A call was: its method, the wire version and transport it spoke, its task's state and context. */
function A2AFields({ detail }: { detail: A2ATrafficDetail }) {
  return (
    <>
      <Field label="A2A method">
        {detail.method ? (
          <code data-testid="a2a-method">{detail.method}</code>
        ) : (
          <span data-testid="a2a-method" data-unread="true">
            not read: the call was refused before its body was read
          </span>
        )}
      </Field>
      <Field label="A2A wire">
        <span data-testid="a2a-wire">
          v{detail.version}, {A2A_TRANSPORT[detail.transport]}
        </span>
      </Field>
      <Field label="Task state">
        <span data-testid="a2a-task-state">{detail.taskState ?? '—'}</span>
      </Field>
      <Field label="Context id">{detail.contextId ? <code>{detail.contextId}</code> : '—'}</Field>
    </>
  );
}
