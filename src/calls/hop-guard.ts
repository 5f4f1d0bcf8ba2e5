import { randomBytes } from 'node:crypto';
import { ProtocolError, nextHop, readChain, schemaInvalid, type CallChain } from '../protocol/index.js';

/**
 * The hop guard across agents (issue 28, item 4; openclaw/openclaw#37842: two agents calling each other all
 * night on their operators' bills). For both front doors and the MCP tools, in one place:
 * - inbound, `check` refuses a call that is too deep in its chain (hop over `hopLimit`) or that comes back
 *   along a chain this bridge sent out within the last hour: a loop. Forged values can only get a call
 *   refused: the chain grants nothing, and the bridge remembers only chains it sent itself.
 * - while the operator's agent serves an inbound call (`enter` ... leave), a call it makes through the MCP
 *   tools continues that call's chain one hop further (`next`). OpenClaw tells an MCP server nothing of the
 *   turn a tool call belongs to (static headers; `tools/call` carries the tool's name and arguments only), so
 *   the link is the time: the inbound turns running when the tool is called. Several at once: the deepest
 *   (the hop limit comes soonest). None: a new chain.
 * In memory: a restart forgets the chains sent (the hop limit still ends a loop), and with replicas each
 * remembers its own.
 */
export interface HopGuardOptions {
  /** The deepest hop accepted (setting hopLimit), read per call. */
  hopLimit(): number;
  now?: () => number;
  /** How long a chain sent out is remembered: a call coming back on it within this is a loop. */
  memoryMs?: number;
  /** The most chains remembered (the oldest forgotten first): bounded whatever the agent sends. */
  maxRemembered?: number;
}

/** One hour: "a call whose chain id this bridge sent out within the last hour" (issue 28). */
export const CHAIN_MEMORY_MS = 3_600_000;
const MAX_REMEMBERED = 10_000;

/** A chain sent out: the lowest hop it left at, and when it last left. */
interface Sent {
  hop: number;
  at: number;
}

export class HopGuard {
  private readonly now: () => number;
  private readonly memoryMs: number;
  private readonly maxRemembered: number;
  /** Chains sent out, least recently sent first (a send moves one to the end). */
  private readonly sent = new Map<string, Sent>();
  /**
   * The chains of the inbound calls being served now, by turn; undefined: a call that came with none, whose
   * new chain is made only if a call out needs it (most turns call nobody; a random id per call cost ~10 µs).
   */
  private readonly running = new Map<number, CallChain | undefined>();
  private turns = 0;

  constructor(private readonly options: HopGuardOptions) {
    this.now = options.now ?? Date.now;
    this.memoryMs = options.memoryMs ?? CHAIN_MEMORY_MS;
    this.maxRemembered = options.maxRemembered ?? MAX_REMEMBERED;
  }

  /**
   * An inbound call's chain, refused (DELEGATION_EXCEEDED 400, step `chain`) when its hop is over the limit,
   * or when it is a chain this bridge sent out at this hop or an earlier one: it went round and came back.
   * A call from further up the same chain (a lower hop: the caller asked twice) is no loop and goes on.
   */
  check(chain: CallChain | undefined): void {
    if (!chain) return;
    const limit = this.options.hopLimit();
    if (chain.hop > limit) {
      throw refusal(
        `This call is hop ${chain.hop} of a chain of calls between agents (chain ${chain.id}), and this agent ` +
          `takes calls at most ${limit} hops deep (its operator's setting hopLimit): agents calling agents must ` +
          'end somewhere. Answer with what you have, without calling further agents.',
      );
    }
    const sent = this.remembered(chain.id);
    if (sent && chain.hop >= sent.hop) {
      throw refusal(
        `This call came back to this agent: it is hop ${chain.hop} of chain ${chain.id}, which this agent ` +
          `itself passed on ${ago(this.now() - sent.at)} ago (at hop ${sent.hop}). Agents are calling each ` +
          'other in a loop; it is refused so the loop ends. Answer without calling this agent again.',
      );
    }
  }

  /**
   * The operator's agent serves an inbound call now (its gateway turn runs): calls out continue its chain
   * (none: one is started here, this call its hop 1) until the returned function is called.
   */
  enter(chain: CallChain | undefined): () => void {
    const turn = ++this.turns;
    this.running.set(turn, chain);
    return () => this.running.delete(turn);
  }

  /**
   * The chain the next call out carries, remembered as sent: the deepest running inbound call's one hop
   * further (the latest entered among equals), else a new one.
   */
  next(): CallChain {
    // A turn that came with no chain is hop 1 of the chain it will get.
    let deepest: number | undefined;
    let deepestHop = 0;
    for (const [turn, chain] of this.running) {
      const hop = chain?.hop ?? 1;
      if (hop < deepestHop) continue;
      deepest = turn;
      deepestHop = hop;
    }
    const chain = deepest === undefined ? newChain() : nextHop(this.chainOf(deepest));
    this.remember(chain);
    return chain;
  }

  /** The inbound chains being served now (copies): what calls out would continue. */
  runningChains(): CallChain[] {
    return [...this.running.keys()].map((turn) => ({ ...this.chainOf(turn) }));
  }

  /** A running turn's chain: the one it came with, or the one started for it (once, then kept). */
  private chainOf(turn: number): CallChain {
    const known = this.running.get(turn);
    if (known) return known;
    const started = newChain();
    this.running.set(turn, started);
    return started;
  }

  private remember(chain: CallChain): void {
    const now = this.now();
    const known = this.remembered(chain.id);
    this.sent.delete(chain.id);
    this.sent.set(chain.id, { hop: known ? Math.min(known.hop, chain.hop) : chain.hop, at: now });
    this.forget(now);
  }

  private remembered(id: string): Sent | undefined {
    const sent = this.sent.get(id);
    if (!sent) return undefined;
    if (sent.at > this.now() - this.memoryMs) return sent;
    this.sent.delete(id);
    return undefined;
  }

  /** Drops what is past the memory, and the least recently sent beyond the bound. */
  private forget(now: number): void {
    for (const [id, sent] of this.sent) {
      if (sent.at > now - this.memoryMs && this.sent.size <= this.maxRemembered) break;
      this.sent.delete(id);
    }
  }
}

/** A chain nobody passed on: a new random id (128 bits), hop 1. */
export function newChain(): CallChain {
  return { id: randomBytes(16).toString('base64url'), hop: 1 };
}

function refusal(message: string): ProtocolError {
  return new ProtocolError('DELEGATION_EXCEEDED', 400, message, { step: 'chain' });
}

/**
 * The chain a call carries as its protocol spells it (`where`: the field, for the refusal), or undefined;
 * a malformed one is refused (SCHEMA_INVALID 400, step `chain`) naming the field and its rule.
 */
export function chainOf(value: unknown, where: string): CallChain | undefined {
  const chain = readChain(value);
  if (chain && 'problem' in chain) throw schemaInvalid(`${where} ${chain.problem}.`, 'chain');
  return chain;
}

function ago(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}
