import type { ApiClient } from '../api/client';
import type { SelfTestResponse, SelfTestStageView } from '../api/contract';
import { useAction } from '../hooks/useAction';
import { formatMs } from '../lib/format';
import { Badge } from './Badge';
import { ErrorNotice } from './States';

/** The self-test's stages in order (src/self-test.ts): it stops at the first failure. */
const STAGES: { name: SelfTestStageView['name']; label: string }[] = [
  { name: 'resolve', label: 'Public URL resolves' },
  { name: 'card', label: 'Card fetched through the public URL and matches' },
  { name: 'signature', label: 'Signed request accepted' },
  { name: 'gateway', label: 'Gateway answered' },
  { name: 'reply-signature', label: 'Reply signature verifies' },
];

/**
 * Runs POST /api/selftest (a signed chat call to ourselves through the public URL) and shows each stage.
 * `onDone` refreshes the status: the call went through the gateway, and its outcome is now the gateway's.
 */
export function SelfTestPanel({ api, onDone }: { api: ApiClient; onDone?: () => Promise<void> }) {
  const test = useAction(async () => {
    try {
      return await api.selfTest();
    } finally {
      void onDone?.();
    }
  });
  return (
    <div className="selftest">
      <div className="selftest-bar">
        <p className="muted">
          Sends a signed <code>chat</code> message to this agent through its public URL, as a stranger would.
        </p>
        <button type="button" className="button primary" onClick={() => void test.run()} disabled={test.busy}>
          {test.busy ? (
            <>
              <span className="spinner" aria-hidden="true" /> Testing…
            </>
          ) : (
            'Test'
          )}
        </button>
      </div>
      {test.error ? <ErrorNotice error={test.error} title="The self-test could not run" /> : null}
      {test.result ? <SelfTestResult result={test.result} /> : null}
    </div>
  );
}

export function SelfTestResult({ result }: { result: SelfTestResponse }) {
  const known = new Set(STAGES.map((stage) => stage.name));
  const rows = [
    ...STAGES.map((stage) => ({ ...stage, run: result.stages.find((s) => s.name === stage.name) })),
    // Stages a newer core added: shown too, after ours.
    ...result.stages.filter((s) => !known.has(s.name)).map((s) => ({ name: s.name, label: s.label, run: s })),
  ];
  return (
    <div className="selftest-result" data-testid="selftest-result" data-ok={result.ok}>
      <p className="selftest-summary" role="status">
        <Badge tone={result.ok ? 'ok' : 'bad'}>{result.ok ? 'Passed' : 'Failed'}</Badge>
        <span>
          {result.url} · {formatMs(result.totalMs)}
        </span>
      </p>
      <ol className="stage-list">
        {rows.map(({ name, label, run }) => {
          const state = run ? (run.ok ? 'pass' : 'fail') : 'not-run';
          return (
            <li
              key={name}
              className={`stage ${state}`}
              data-testid="selftest-stage"
              data-stage={name}
              data-state={state}
            >
              <span className="stage-icon" aria-hidden="true">
                {state === 'pass' ? '✓' : state === 'fail' ? '✕' : '–'}
              </span>
              <span className="stage-text">
                <span className="stage-label">
                  {run?.label ?? label}
                  <span className="visually-hidden">
                    {state === 'pass' ? ': passed' : state === 'fail' ? ': failed' : ': not run'}
                  </span>
                </span>
                {run?.detail ? <span className="stage-detail">{run.detail}</span> : null}
                {run && !run.ok && run.fix ? (
                  <span className="stage-fix" data-testid="selftest-fix">
                    <span className="fix-label">Fix: </span>
                    {run.fix}
                  </span>
                ) : null}
                {!run ? <span className="stage-detail">Not run: an earlier stage failed.</span> : null}
              </span>
              <span className="stage-ms">{run ? formatMs(run.ms) : ''}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
