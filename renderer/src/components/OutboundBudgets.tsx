/**
 * Today's calls and tokens to each agent the operator's own agent called, inside Calls out, against the daily
 * budget per agent (settings outboundCallsPerDay, outboundTokensPerDay; Settings changes them). An agent whose
 * budget is spent is marked: the MCP tools refuse to call it until UTC midnight.
 */
import { useCallback } from 'react';
import type { ApiClient } from '../api/client';
import { useLoaded } from '../hooks/useLoaded';
import { formatCount, formatDateTime } from '../lib/format';
import { Badge } from './Badge';
import { ErrorNotice, Loading } from './States';

/** `12 calls`, or `any number of calls` for no limit (0). */
const amount = (value: number, unit: string) =>
  value > 0 ? `${formatCount(value)} ${unit}` : `any number of ${unit}`;
/** `3 of 100`, or `3 (no limit)`. */
const used = (count: number, budget: number) =>
  budget > 0 ? `${formatCount(count)} of ${formatCount(budget)}` : `${formatCount(count)} (no limit)`;

export function OutboundBudgets({ api }: { api: ApiClient }) {
  const { view, loadError, load } = useLoaded(useCallback(() => api.outboundBudgets(), [api]));

  if (!view) {
    return loadError ? <ErrorNotice error={loadError} title="Cannot load today's budgets" /> : <Loading />;
  }
  return (
    <div data-testid="outbound-budgets">
      <p className="muted small">
        Each agent your agent calls may get {amount(view.callsPerDay, 'calls')} and{' '}
        {amount(view.tokensPerDay, 'tokens')} (about four characters sent or read) a day; past either, your
        agent is told the budget is spent and when it resets (UTC midnight, {formatDateTime(view.resetsAt)}).{' '}
        <button type="button" className="button small" onClick={() => void load()}>
          Refresh
        </button>
      </p>
      {view.callees.length === 0 ? (
        <p className="muted small" data-testid="outbound-budgets-empty">
          Your agent has called no agent today.
        </p>
      ) : (
        <table className="table budgets-table">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Calls today</th>
              <th scope="col">Tokens today</th>
            </tr>
          </thead>
          <tbody>
            {view.callees.map((row) => (
              <tr key={row.callee} data-callee={row.callee} data-spent={row.spent ?? ''}>
                <td>
                  <code>{row.callee}</code>{' '}
                  {row.spent ? (
                    <Badge tone="bad">{row.spent === 'calls' ? 'calls spent' : 'tokens spent'}</Badge>
                  ) : null}
                </td>
                <td>{used(row.calls, view.callsPerDay)}</td>
                <td>{used(row.tokens, view.tokensPerDay)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
