import type { IncomingMessage, ServerResponse } from 'node:http';
import { createA2ATasks, type A2ATasks, type A2ATasksOptions } from './a2a-tasks.js';
import { skillPaths, type A2ACardInput } from './agent-card.js';
import { attachmentRules } from '../calls/image-fetch.js';
import type { SkillDirectory, SkillRuntime } from '../calls/skill-runtime.js';
import { DEFAULT_SKILL } from '../protocol/skill-ids.js';
import type { CardRouteOptions } from './card-route.js';
import { A2AFrontDoor } from './front-door.js';
import type { A2AKeyCaller } from './key-gate.js';
import type { EnvelopeEvent } from '../agent/events.js';
import type { Intake } from '../agent/intake.js';
import type { MountedDoor } from '../agent/server.js';
import type { SseOptions } from '../agent/sse.js';
import { A2ACalls, type A2ACallsOptions } from './shared-core.js';
import { Knocks, type KnocksOptions } from '../access/knocks.js';
import { KnockDoor, type KnockHandling } from './knock.js';
import { KnockDecisions, knockView, type KnockDecisionsOptions } from './knock-decisions.js';
import type { KnockView } from '../protocol/console-api.js';
import type { AccessChange } from '../access/access-control.js';
import type { CallbackEvent } from '../agent/events.js';
import { screenPayload } from '../access/injection-screen.js';
import { escapedLine } from '../lib/text.js';
import type { PublicKeyEntry } from '../protocol/index.js';
import type { Settings } from '../settings/schema.js';
import type { RedisConnection } from '../state/redis-connection.js';

/** Knock to pair (knock.ts): where the knocks live, their bounds, and what an approval issues. */
export interface A2AKnockOptions {
  dataDir: string;
  limits?: KnocksOptions;
  keys: KnockDecisionsOptions['keys'];
  settings(): {
    injectionScreen: 'flag' | 'refuse' | 'off';
    pendingExpiryHours: number;
    taskRetentionHours: number;
  };
  /** The knocks' list changed (the console and the tray are told): a new knock as the console shows it. */
  onChange(added?: KnockView): void;
  now?: () => number;
  /** How often expired knocks are looked for (tests: 0, and KnockDecisions.sweep by hand). */
  sweepEveryMs?: number;
}

export interface A2ADoorOptions extends Omit<CardRouteOptions, 'card'> {
  /** The card's inputs as they are now (public URL, names; `keylessAllowed` under the `open` policy). */
  card(): A2ACardInput;
  /** A published skill's own card (front-door.ts `skillCard`). */
  skillCard?(id: string): A2ACardInput | undefined;
  /** The conversations minted for keyless callers come from the tasks' store. */
  calls: Omit<A2ACallsOptions, 'mintedContexts'>;
  tasks: A2ATasksOptions;
  bodyLimitBytes(): number;
  /** Counts a stream against the agent port's caps on open streams (AgentServer's intake). */
  openStream?(req: IncomingMessage, res: ServerResponse): void;
  sse?: SseOptions;
  onError(error: unknown): void;
  /** Each A2A request as a traffic entry (the app's `envelope` event, `protocol: 'a2a'`). */
  onCall(event: EnvelopeEvent): void;
  /** Keyless callers knock under `pairing`; absent (replicas: the list is not shared yet): refused. */
  knocks?: A2AKnockOptions;
}

export interface A2ADoor {
  frontDoor: A2AFrontDoor<A2AKeyCaller>;
  tasks: A2ATasks;
  /** The operator's decisions on knocks (the console's); absent when keyless callers cannot knock. */
  knocks?: KnockDecisions;
  /** For AgentServer.mount: the paths, the runs to drain at shutdown, then the tasks' close. */
  mounted: MountedDoor;
}

/**
 * The A2A front door as the app runs it: tasks in the agent's task state (data dir or Redis), the gate
 * and chat core on the shared caller core (shared-core.ts), mounted on the agent port. `tasks.recover()`
 * once shared state answers (app start).
 */
export function createA2ADoor(options: A2ADoorOptions): A2ADoor {
  const tasks = createA2ATasks({ ...options.tasks, onError: options.onError });
  const knocking = options.knocks;
  const calls = new A2ACalls({
    ...options.calls,
    mintedContexts: (owner, contextId) => tasks.store.hasMintedContext(owner, contextId),
    knocking: () => knocking !== undefined,
  });
  const knocks = knocking && createKnocks(knocking, tasks, calls, options);
  const frontDoor = new A2AFrontDoor<A2AKeyCaller>({
    ...tasks.door,
    ...(knocks ? { knocks: knocks.handling } : {}),
    card: options.card,
    ...(options.skillCard ? { skillCard: options.skillCard } : {}),
    signer: options.signer,
    publicKeys: options.publicKeys,
    cardTTLSeconds: options.cardTTLSeconds,
    gate: calls,
    core: calls,
    bodyLimitBytes: options.bodyLimitBytes,
    ...(options.calls.attachments ? { attachments: options.calls.attachments } : {}),
    openStream: options.openStream,
    sse: options.sse,
    onError: options.onError,
    onCall: options.onCall,
  });
  const decisions = knocks?.decisions;
  return {
    frontDoor,
    tasks,
    ...(decisions ? { knocks: decisions } : {}),
    mounted: {
      owns: (path) => frontDoor.owns(path),
      handle: (req, res) => frontDoor.handle(req, res),
      activeRuns: () => frontDoor.activeRuns() + (decisions?.activeRuns ?? 0),
      abort: () => {
        frontDoor.close();
        decisions?.close();
      },
      close: () => {
        decisions?.close();
        tasks.close();
      },
    },
  };
}

/** The knocks' list, the caller's side of it (the front door's) and the operator's (the console's). */
function createKnocks(
  options: A2AKnockOptions,
  tasks: A2ATasks,
  calls: A2ACalls,
  door: Pick<A2ADoorOptions, 'onCall' | 'onError' | 'calls'>,
): { handling: KnockHandling; decisions: KnockDecisions } {
  const knocks = new Knocks(options.dataDir, { ...options.limits, now: options.now });
  const caller = new KnockDoor({
    knocks,
    tasks: tasks.store,
    pushConfigs: tasks.door.pushConfigs,
    taskCapacity: tasks.door.taskCapacity,
    admitRequest: (caller) => calls.admitRequest(caller),
    settings: options.settings,
    screen: door.calls.screen,
    onChange: (added) => options.onChange(added && knockView(added)),
    now: options.now,
  });
  const decisions = new KnockDecisions({
    knocks,
    tasks: tasks.store,
    calls,
    keys: options.keys,
    settings: options.settings,
    onChange: () => options.onChange(),
    onCall: door.onCall,
    onError: door.onError,
    now: options.now,
    sweepEveryMs: options.sweepEveryMs,
  });
  const handling: KnockHandling = {
    knock: (request, context) => caller.knock(request, context),
    reveal: (task, context) => caller.reveal(task, context),
    canceled: (taskId, context) => {
      caller.canceled(taskId, context);
      decisions.canceled(taskId);
    },
  };
  return { handling, decisions };
}

type CardSettings = { agentName: string; agentDescription: string; access: string };

/**
 * The agent's A2A card from what the SAMVAD card is built from: one agent, one name, and every published
 * skill. Its interfaces reach the default skill; each other skill's entry says where its own card is, whose
 * interfaces reach that skill (README "A2A skills": the SDK's client picks a card, not a skill).
 */
export function a2aCardInput(
  url: string,
  settings: CardSettings,
  skills: Pick<SkillDirectory, 'published'>,
  version: string,
): A2ACardInput {
  return {
    baseUrl: url,
    name: settings.agentName,
    description: settings.agentDescription,
    version,
    documentationUrl: `${url}/agent/intro`,
    skills: skills.published().map((skill) => ({
      id: skill.id,
      name: skill.name,
      description:
        skill.id === DEFAULT_SKILL
          ? skill.description
          : `${skill.description} (A2A: this skill has its own agent card, ${url}${skillPaths(skill.id).card}, whose interfaces reach it; this card's reach "${DEFAULT_SKILL}".)`,
      examples: [...skill.examples],
    })),
    keylessAllowed: settings.access === 'open',
  };
}

/**
 * A published skill's own A2A card (`/a2a/skills/<id>/.well-known/agent-card.json`): that skill alone, and
 * interfaces that reach it. Keyless callers (the `open` policy) are offered a public skill's only. The
 * default skill has one too, beside the agent's card, so every skill is picked the same way.
 */
export function skillCardInput(
  url: string,
  settings: CardSettings,
  skill: SkillRuntime,
  version: string,
): A2ACardInput {
  const paths = skillPaths(skill.id);
  return {
    baseUrl: url,
    name: `${settings.agentName}: ${skill.name}`,
    description: skill.description,
    version,
    documentationUrl: `${url}/agent/intro`,
    skills: [
      { id: skill.id, name: skill.name, description: skill.description, examples: [...skill.examples] },
    ],
    keylessAllowed: settings.access === 'open' && skill.audience === 'public',
    paths: { jsonRpc: paths.jsonRpc, rest: paths.rest },
  };
}

/** The app's parts the A2A door is built from (AgentBridgeApp itself): one agent behind two front doors. */
export interface AppParts {
  readonly agentUrl: string;
  readonly currentSettings: Settings;
  /** The published skills: the cards list them, and each call runs on its door's. */
  readonly published: SkillDirectory;
  keys: { readonly signer: ReturnType<CardRouteOptions['signer']>; publicKeys(): PublicKeyEntry[] };
  a2aKeys: A2ACallsOptions['keys'] & A2AKnockOptions['keys'];
  access: { store: { deniedUntil(caller: string): number | undefined } };
  /** The hop guard SAMVAD's pipeline uses too (calls/hop-guard.ts). */
  readonly chains: A2ACallsOptions['chains'];
  server: {
    limits: A2ACallsOptions['limits'];
    tasks: A2ATasksOptions['taskState'];
    intake: Pick<Intake, 'openStream'>;
    readonly draining: boolean;
  };
  shared: { connection: RedisConnection; recoverEveryMs: number } | undefined;
}

/** How the app wires the door: the gateway turn SAMVAD's chat skill runs, and where events go. */
export interface AppWiring {
  gateway: A2ACallsOptions['gateway'];
  /** The agent's software version, shown on the card. */
  version: string;
  keepAliveMs?: number;
  now: () => number;
  onCallback(event: CallbackEvent): void;
  onCall(event: EnvelopeEvent): void;
  /**
   * Keyless callers knock under `pairing` (knock.ts): where their list lives and its bounds. Not with
   * replicas: the list would be one replica's, so keyless callers are refused there instead.
   */
  knocks: Pick<A2AKnockOptions, 'dataDir' | 'limits'>;
  /** The knocks' list changed: a new knock, or another change (the console, the tray, `serve`). */
  onAccess(change: AccessChange): void;
}

/** The A2A door on the app's own parts: the same keys, limits, task state, gateway turn and settings. */
export function createAppA2ADoor(app: AppParts, wiring: AppWiring): A2ADoor {
  const settings = () => app.currentSettings;
  return createA2ADoor({
    card: () => a2aCardInput(app.agentUrl, settings(), app.published, wiring.version),
    skillCard: (id) => {
      const skill = app.published.get(id);
      return skill && skillCardInput(app.agentUrl, settings(), skill, wiring.version);
    },
    signer: () => app.keys.signer,
    publicKeys: () => app.keys.publicKeys(),
    cardTTLSeconds: () => settings().cardTTL,
    calls: {
      keys: app.a2aKeys,
      policy: () => settings().access,
      limits: app.server.limits,
      settings,
      screen: screenPayload,
      skills: app.published,
      declinedUntil: (caller) => app.access.store.deniedUntil(caller),
      gateway: wiring.gateway,
      callerInstructions: () => settings().callerInstructions,
      draining: () => app.server.draining,
      attachments: () => attachmentRules(settings()),
      chains: app.chains,
      now: wiring.now,
    },
    tasks: {
      taskState: app.server.tasks,
      replicas: app.shared && {
        connection: app.shared.connection,
        recoverEveryMs: app.shared.recoverEveryMs,
      },
      retentionMs: () => settings().taskRetentionHours * 3600_000,
      push: { devHttpPeers: settings().devHttpPeers, onEvent: wiring.onCallback },
    },
    bodyLimitBytes: () => settings().bodyLimitBytes,
    openStream: (req, res) => app.server.intake.openStream(req, res),
    sse: { keepAliveMs: wiring.keepAliveMs },
    // A bug's message may quote what a caller sent: one escaped line in the operator's terminal.
    onError: (error) => console.error(`Agent: A2A: ${escapedLine(thrownText(error), 300)}`),
    onCall: wiring.onCall,
    ...(app.shared
      ? {}
      : {
          knocks: {
            ...wiring.knocks,
            keys: app.a2aKeys,
            settings,
            now: wiring.now,
            onChange: (knock?: KnockView) =>
              wiring.onAccess(knock ? { kind: 'new-knock', knock } : { kind: 'changed' }),
          },
        }),
  });
}

/** What was thrown, as text: an Error's message, anything else as String() reads it (never throws). */
function thrownText(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}
