import { ProtocolError } from '../protocol/index.js';
import type { CallCheck, CallLimits, CallVerdict } from '../state/call-limits.js';

/**
 * What every identified caller passes before its turn runs, whichever front door it came through (SAMVAD's
 * pipeline steps 5 and 7, A2A's gate): the request limits and daily token budget, and the injection screen;
 * and after it, its usage charged. Each refusal is a ProtocolError whose message says what to do. The turn
 * itself (the restricted-agent rule, the gateway call, usage on hang-up) is bridge/gateway-turn.ts, its
 * framing bridge/framing.ts.
 */

/** A content screen over the payload: the rule that matched, if any. */
export type PayloadScreen = (payload: unknown) => { rule: string } | undefined;

/**
 * Counts the call against the limits (and reserves `call.reserve` tokens of its sender's budget); throws
 * the refusal, with the wait before a retry, when one of them says no.
 */
export async function checkLimits(limits: CallLimits, call: CallCheck, skill?: string): Promise<void> {
  const pending = limits.check(call);
  // The data-dir version answers at once: no promise to wait for on the single-process path.
  const verdict: CallVerdict = pending instanceof Promise ? await pending : pending;
  if (verdict.ok) return;
  const { sender } = call;
  const wait = verdict.waitSeconds;
  // A skill's own account (CallCheck.account) is named with its skill: the others may still be called.
  const on = call.account !== undefined && skill !== undefined ? ` for skill "${skill}"` : '';
  switch (verdict.refusal) {
    case 'global':
      throw new ProtocolError(
        'RATE_LIMITED',
        429,
        `This agent is at its limit of requests per minute; retry in ${wait} s.`,
        { step: 'rate-limit', retryAfterSeconds: wait },
      );
    case 'strangers':
      throw new ProtocolError(
        'RATE_LIMITED',
        429,
        `This agent is at its limit of requests per minute from senders its operator has not approved yet; retry in ${wait} s.`,
        { step: 'rate-limit', retryAfterSeconds: wait },
      );
    case 'sender':
      throw new ProtocolError(
        'RATE_LIMITED',
        429,
        on
          ? `${sender} is over its limit of requests per minute${on}; retry in ${wait} s.`
          : `${sender} is over its per-sender limit of requests per minute; retry in ${wait} s.`,
        { step: 'rate-limit', retryAfterSeconds: wait },
      );
    case 'budget':
      throw new ProtocolError(
        'TOKEN_BUDGET_EXCEEDED',
        429,
        `${sender} has used its ${call.tokensPerDay} tokens for today${on}; the budget resets at UTC midnight (in ${wait} s).`,
        { step: 'rate-limit', retryAfterSeconds: wait },
      );
    case 'budget-held':
      throw new ProtocolError(
        'TOKEN_BUDGET_EXCEEDED',
        429,
        `${sender} has calls in progress that may use the rest of its ${call.tokensPerDay} tokens for today${on}; retry in ${wait} s, once they have ended.`,
        { step: 'rate-limit', retryAfterSeconds: wait },
      );
    case 'full':
      throw new ProtocolError('AGENT_UNAVAILABLE', 503, 'The agent is overloaded; retry shortly.', {
        step: 'nonce',
        retryAfterSeconds: wait,
      });
    case 'replay':
      throw new ProtocolError(
        'REPLAY_DETECTED',
        401,
        `Nonce "${call.nonce}" was already used; every envelope needs a fresh nonce.`,
        { step: 'nonce' },
      );
  }
}

/**
 * The injection screen's verdict on a payload: the rule that matched (the call goes on, marked), nothing, or
 * under `refuse` a 400 INJECTION_DETECTED. `noted` hears of a match first, refused or not (the log shows it).
 */
export function screenCall(
  screen: PayloadScreen,
  setting: 'flag' | 'refuse' | 'off',
  payload: unknown,
  noted?: (match: { rule: string }) => void,
): { rule: string } | undefined {
  if (setting === 'off') return undefined;
  const match = screen(payload);
  if (!match) return undefined;
  noted?.(match);
  if (setting === 'refuse') {
    throw new ProtocolError(
      'INJECTION_DETECTED',
      400,
      `The message looks like a prompt-injection attempt (rule "${match.rule}") and this agent refuses those; rephrase it as a plain request.`,
      { step: 'input' },
    );
  }
  return match;
}

/**
 * Tokens a turn cost its caller, charged to its daily budget (its account with the skill); a prompt size the
 * gateway reported may lower the prompt floor (what every turn costs before the caller's words).
 */
export function chargeUsage(limits: CallLimits, account: string, tokens: number, prompt?: number): void {
  limits.addTokens(account, tokens);
  if (prompt !== undefined) limits.notePrompt(prompt);
}
