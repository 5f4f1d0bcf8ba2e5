import { EventEmitter } from 'node:events';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { AccessControl, type AccessChange } from './access/access-control.js';
import { A2AKeys } from './access/a2a-keys.js';
import { screenPayload } from './access/injection-screen.js';
import { PeerKeyResolver } from './agent/peer-keys.js';
import { AgentServer } from './agent/server.js';
import type { IntakeOptions } from './agent/intake.js';
import type { CallbackOptions } from './agent/callbacks.js';
import type { CallbackEvent, EnvelopeEvent } from './agent/events.js';
import { SkillRegistry } from './agent/skill-registry.js';
import type { Skill } from './agent/skill.js';
import { createChatSkill, type GatewayOutcome } from './bridge/chat-skill.js';
import type { GatewayTurnOptions } from './bridge/gateway-turn.js';
import { createA2ADoor, type A2ADoor } from './a2a/app-door.js';
import type { GatewayProblem } from './bridge/diagnosis.js';
import { openclawConfigPath, resolveGatewayConfig, type ResolvedGateway } from './bridge/gateway-config.js';
import type { GatewaySnapshot, GatewayTransition } from './bridge/gateway-state.js';
import { GatewayTarget, agentModel } from './bridge/gateway-target.js';
import { GatewayWatch } from './bridge/gateway-watch.js';
import { KeyStore } from './keys/keystore.js';
import { ensureDir, errorCode, readJsonFile } from './lib/atomic-file.js';
import { OutboundCalls } from './mcp/outbound.js';
import { buildCard, type AgentCard } from './protocol/index.js';
import type { GatewayAgentView } from './protocol/console-api.js';
import type { Settings } from './settings/schema.js';
import {
  REGISTRATION_FILE,
  Registrar,
  type Registration,
  type RegistryState,
} from './registry/registration.js';
import { runSelfTest, type SelfTestReport } from './self-test.js';
import { AddressMemory } from './tunnel/address-memory.js';
import { CommandProvider } from './tunnel/command-provider.js';
import { LocaltunnelProvider } from './tunnel/localtunnel-provider.js';
import type { TunnelProvider } from './tunnel/provider.js';
import { checkReachable } from './tunnel/reachability.js';
import type { TunnelState } from './tunnel/state.js';
import { TunnelSupervisor, type AddressChange, type SupervisorOptions } from './tunnel/supervisor.js';
import { ACCESS_FILE, readAccessFile, type AccessFile } from './access/access-store.js';
import { A2A_KEYS_FILE, A2AKeyFile } from './state/a2a-key-store.js';
import { SharedState } from './state/shared-state.js';
import type { StateHealth } from './state/redis-connection.js';
import packageJson from '../package.json' with { type: 'json' };

export type { StateHealth } from './state/redis-connection.js';

export const AGENT_VERSION: string = packageJson.version;
const MAX_CARD_KEYS = 16;

export interface AppOptions {
  dataDir: string;
  /** Effective settings for this run: the store's values with flags and env applied. */
  settings: Settings;
  env?: NodeJS.ProcessEnv;
  /** Extra skills registered beside `chat` (tests use their own to cover the generic core). */
  extraSkills?: Skill[];
  /** Test seams for callbacks (e.g. loopback targets); production uses the defaults. */
  callbacks?: Partial<CallbackOptions>;
  /** How often the gateway's health is probed (GET /health); 0 turns the periodic probe off. */
  gatewayProbeMs?: number;
  /** Tunnel supervision timing (tests shorten the backoff and the reachability interval). */
  tunnel?: Pick<SupervisorOptions, 'backoff' | 'checkIntervalMs' | 'random' | 'recheckDelayMs'> & {
    stepTimeoutMs?: number;
  };
  keepAliveMs?: number;
  /** The pending list's bounds (tests use small ones; production: 100 senders, 3 held tasks each). */
  accessLimits?: { maxPending?: number; maxHeldPerSender?: number };
  /** Tasks kept per sender and in all (tests use small ones; production: 200 and 5,000). */
  taskLimits?: { maxPerSender?: number; maxTotal?: number };
  /** How long calls stay refused after Redis comes back without its data (tests shorten the 5 min). */
  stateWipeHoldMs?: number;
  /** Body budget, read/verify slots and body deadlines (tests use short ones; defaults in agent/intake.ts). */
  intake?: Partial<IntakeOptions>;
  now?: () => number;
}

export type { GatewaySnapshot, GatewayTransition } from './bridge/gateway-state.js';

/** One chat call's outcome at the gateway, for metrics; `durationMs` when the gateway was reached. */
export interface GatewayCallEvent {
  ok: boolean;
  problem?: GatewayProblem;
  durationMs?: number;
}

export interface AppEvents {
  envelope: [EnvelopeEvent];
  /** A call the operator's own agent made through the bridge (MCP): direction `out`, refusals included. */
  outbound: [EnvelopeEvent];
  callback: [CallbackEvent];
  /** The gateway's condition changed (gateway-state.ts): each transition once. */
  gateway: [GatewayTransition];
  /** Every chat call's gateway outcome (`gateway` only says when the state changes). */
  gatewayCall: [GatewayCallEvent];
  card: [AgentCard];
  tunnel: [TunnelState];
  address: [AddressChange];
  registry: [RegistryState];
  access: [AccessChange];
  /** The agent callers reach on the gateway: existence and tool policy (GatewayTarget). */
  gatewayAgent: [GatewayAgentView];
  /** Shared state's health (Redis up or down); never emitted with the data dir. */
  state: [StateHealth];
}

/**
 * The composition root: builds keystore, skills, the agent server and the gateway bridge from settings,
 * starts and stops them, and emits what happens (envelopes, callbacks, gateway and card changes).
 */
export class AgentBridgeApp extends EventEmitter<AppEvents> {
  readonly keys: KeyStore;
  readonly skills = new SkillRegistry();
  readonly server: AgentServer;
  private settings: Settings;
  private gateway: ResolvedGateway;
  private listenUrl: string;
  private cachedCard: { card: AgentCard; until: number } | undefined;
  private readonly now: () => number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly peerKeys: PeerKeyResolver;
  readonly registrar: Registrar;
  /** The operator's consent for new senders (policy, approvals, held requests). */
  readonly access: AccessControl;
  /** The keys A2A callers present, issued by the operator. */
  readonly a2aKeys: A2AKeys;
  /** The agent on the gateway that callers reach, and whether it exposes host tools. */
  readonly gatewayTarget: GatewayTarget;
  /** The gateway's one state (probes and calls), and its probe. */
  readonly gatewayWatch: GatewayWatch;
  /** Calls out to other agents for the operator's own agent (the MCP tools), under the outbound policy. */
  readonly outbound: OutboundCalls;
  /** The A2A front door on the agent port: its card, transports and tasks. */
  readonly a2a: A2ADoor;
  private supervisor: TunnelSupervisor | undefined;
  /** The tunnel's address, kept while it reconnects so the agent's id does not flap. */
  private tunnelUrl: string | undefined;
  /** The tunnel's address across restarts, and a change of it the operator has not dismissed. */
  readonly tunnelAddress: AddressMemory;
  /** A tunnel that could not even start (bad settings): kept so `tunnelState` reports it. */
  private tunnelFailure: TunnelState | undefined;
  /** State shared with other replicas on Redis (`redisUrl`); without it, the data dir holds everything. */
  readonly shared: SharedState | undefined;
  private sharedTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AppOptions) {
    super();
    ensureDir(options.dataDir);
    this.settings = options.settings;
    this.env = options.env ?? process.env;
    this.now = options.now ?? Date.now;
    this.gateway = this.resolveGateway();
    this.listenUrl = `http://127.0.0.1:${this.settings.port}`;
    this.tunnelAddress = new AddressMemory(options.dataDir, this.now);
    this.keys = KeyStore.open(options.dataDir, {
      cardTTLSeconds: this.settings.cardTTL,
      now: this.now,
      path: this.settings.keysFile,
    });
    this.keys.onChange(() => this.invalidateCard());
    this.shared = this.settings.redisUrl
      ? new SharedState({
          redisUrl: this.settings.redisUrl,
          limits: { perMinute: this.settings.rpm, perSender: this.settings.perSender },
          tasks: {
            ...options.taskLimits,
            leaseMs: this.settings.taskLeaseSeconds * 1000,
            retentionMs: () => this.settings.taskRetentionHours * 3600_000,
          },
          now: options.now,
          wipeHoldMs: options.stateWipeHoldMs,
          memoryFile: join(options.dataDir, 'redis-sentinel'),
        })
      : undefined;
    const shared = this.shared;
    this.gatewayTarget = new GatewayTarget({
      gateway: () => this.gateway,
      agentId: () => this.settings.gatewayAgent,
      explicitModel: () => this.settings.gatewayModel,
      configPath: () => openclawConfigPath(this.env),
      accepted: () => this.settings.acceptedExposedAgent,
      now: this.now,
      onChange: (view) => this.emit('gatewayAgent', view),
    });
    this.gatewayWatch = new GatewayWatch({
      gateway: () => this.gateway,
      target: this.gatewayTarget,
      now: this.now,
      onTransition: (transition) => this.emit('gateway', transition),
    });

    // One gateway turn for both protocols: the restricted-agent rule, the call, its outcome.
    const chatGateway: GatewayTurnOptions = {
      gateway: () => this.gateway,
      targetProblem: () => this.gatewayTarget.problem(),
      onGatewayOutcome: (outcome) => this.recordGatewayOutcome(outcome),
    };
    this.skills.register(
      createChatSkill({
        ...chatGateway,
        defaultChannel: () => this.settings.defaultChannel,
        callerInstructions: () => this.settings.callerInstructions,
        trust: this.settings.chatTrust,
        allowedPeers: this.settings.allowedPeers,
      }),
    );
    for (const skill of options.extraSkills ?? []) this.skills.register(skill);

    const peerKeys = (this.peerKeys = new PeerKeyResolver({
      pinned: this.settings.trustedPeerKeys,
      devHttpPeers: this.settings.devHttpPeers,
      now: this.now,
      self: {
        isOwnId: (id) => id === this.card().id,
        key: (kid) => this.keys.verificationKey(kid),
        kids: () => this.keys.publicKeys().map((entry) => entry.kid),
      },
      trusted: (sender) => this.access.trusts(sender),
    }));
    this.registrar = new Registrar({
      dataDir: options.dataDir,
      registryUrl: () => this.settings.registryUrl,
      checkReachable: (url) => checkReachable(url, this.card()),
      onState: (state) => this.emit('registry', state),
      shared: shared && {
        save: (record) => void shared.registration.save({ record: [{ key: 'current', value: record }] }),
      },
    });
    // A decision made while Redis does not answer would hold at this replica only: refused, made again later.
    const unwritable = () => {
      const health = shared?.health();
      return health && !health.up ? health.problem : undefined;
    };
    this.access = new AccessControl({
      dataDir: options.dataDir,
      policy: () => this.settings.access,
      allowedPeers: () => this.settings.allowedPeers,
      isOwnId: (id) => id === this.card().id,
      describe: (sender) => peerKeys.describe(sender),
      expiryHours: () => this.settings.pendingExpiryHours,
      heldTasks: {
        // On Redis, each replica then reconciles every held task with the lists it reloads (reloadShared):
        // a replica's copy of a request may miss a task another replica held at the same moment.
        run: (ids) => void this.server.runHeld(ids).catch(reportHeldFailure),
        fail: (ids, message) => void this.server.failHeld(ids, message).catch(reportHeldFailure),
      },
      unwritable,
      shared: shared && { save: (file) => void shared.access.save(accessLists(file)) },
      onChange: (change) => this.emit('access', change),
      now: this.now,
      ...options.accessLimits,
    });
    this.a2aKeys = new A2AKeys({
      records: shared?.a2aKeys ?? new A2AKeyFile(options.dataDir),
      unavailable: unwritable,
      onChange: () => this.emit('access', { kind: 'changed' }),
      now: this.now,
    });
    this.server = new AgentServer({
      dataDir: options.dataDir,
      card: () => this.card(),
      signer: () => this.keys.signer,
      skills: this.skills,
      peerKeys,
      settings: () => ({
        tokensPerDay: this.settings.tokensPerDay,
        bearerTokens: this.settings.bearerTokens,
        allowUnsigned: this.settings.allowUnsigned,
        bodyLimitBytes: this.settings.bodyLimitBytes,
        taskRetentionHours: this.settings.taskRetentionHours,
        keepMessageContents: this.settings.keepMessageContents,
        injectionScreen: this.settings.injectionScreen,
        delegationMaxLifetimeSeconds: this.settings.delegationMaxLifetimeSeconds,
      }),
      access: this.access.gate,
      screen: screenPayload,
      taskLimits: options.taskLimits,
      state: shared && {
        limits: shared.limits,
        tasks: shared.tasks,
        recoverEveryMs: shared.recoverEveryMs,
      },
      intake: options.intake,
      gatewayStatus: () => this.gateway.status,
      gatewayServing: () => this.gatewayWatch.serving(),
      stateUp: () => this.stateHealth().up,
      agentVersion: AGENT_VERSION,
      events: { envelope: (e) => this.emit('envelope', e), callback: (e) => this.emit('callback', e) },
      devHttpPeers: this.settings.devHttpPeers,
      callbacks: options.callbacks,
      keepAliveMs: options.keepAliveMs,
      now: this.now,
    });
    // The A2A front door on the agent port, on the caller core SAMVAD's calls pass too.
    this.a2a = createA2ADoor({
      card: () => ({
        baseUrl: this.agentUrl,
        name: this.settings.agentName,
        description: this.settings.agentDescription,
        version: AGENT_VERSION,
        documentationUrl: `${this.agentUrl}/agent/intro`,
        skills: this.skills
          .definitions()
          .filter((skill) => skill.id === 'chat')
          .map(({ id, name, description }) => ({ id, name, description })),
        keylessAllowed: this.settings.access === 'open',
      }),
      signer: () => this.keys.signer,
      publicKeys: () => this.keys.publicKeys(),
      cardTTLSeconds: () => this.settings.cardTTL,
      calls: {
        keys: this.a2aKeys,
        policy: () => this.settings.access,
        limits: this.server.limits,
        settings: () => this.settings,
        screen: screenPayload,
        declinedUntil: (caller) => this.access.store.deniedUntil(caller),
        gateway: chatGateway,
        callerInstructions: () => this.settings.callerInstructions,
        draining: () => this.server.draining,
        now: this.now,
      },
      tasks: {
        taskState: this.server.tasks,
        replicas: shared && { connection: shared.connection, recoverEveryMs: shared.recoverEveryMs },
        retentionMs: () => this.settings.taskRetentionHours * 3600_000,
        push: { devHttpPeers: this.settings.devHttpPeers, onEvent: (e) => this.emit('callback', e) },
      },
      bodyLimitBytes: () => this.settings.bodyLimitBytes,
      sse: { keepAliveMs: options.keepAliveMs },
      onError: (error) => console.error(`Agent: A2A: ${(error as Error).message}`),
      onCall: (event) => this.emit('envelope', event),
    });
    this.server.mount(this.a2a.mounted);
    this.outbound = new OutboundCalls({
      identity: () => ({ id: this.card().id, signer: this.keys.signer }),
      settings: () => this.settings,
      onEvent: (event) => this.emit('outbound', event),
      now: this.now,
    });
    // Tasks held before a restart whose sender was decided meanwhile (or whose request is gone); on Redis,
    // once the lists are loaded (start).
    if (!shared) void this.reconcileHeld();
  }

  private async reconcileHeld(): Promise<void> {
    try {
      this.access.reconcile(await this.server.heldTasks());
    } catch (error) {
      reportHeldFailure(error);
    }
  }

  /** Connects to Redis (refusing to start without it: nothing could be checked) and follows the others. */
  private async startShared(shared: SharedState): Promise<void> {
    await shared.connection.connect();
    await this.importToShared(shared);
    await this.refreshShared();
    shared.connection.on('change', (topic) => {
      if (topic !== 'a2a-keys') void this.reloadShared(topic);
    });
    shared.connection.on('health', (health) => {
      this.emit('state', health);
      // Back after an outage: what the others changed meanwhile was announced while we could not hear it.
      if (health.up) void this.refreshShared();
    });
    // A rotation at one replica reaches the others' cards within a second (KeyStore.reload reads the file).
    this.keys.onChange(() => void shared.connection.announce('keys'));
    // And in case an announcement was missed all the same (the subscriber reconnecting): a look every 30 s.
    this.sharedTimer = setInterval(() => void this.refreshShared(), 30_000);
    this.sharedTimer.unref();
  }

  /** Everything replicas share, read again: keys, access lists, registration, then held tasks. */
  private async refreshShared(): Promise<void> {
    await this.reloadShared('keys');
    await this.reloadShared('access');
    await this.reloadShared('registration');
  }

  /**
   * The first replica on an empty Redis brings what this data dir knew (an agent that ran alone before):
   * its approvals, requests and denials, its A2A keys and its registration, so moving to replicas loses none.
   * Once only: a marker in Redis says it was done, and the files are renamed, so a later start (or a Redis
   * that lost its data) never brings back an approval revoked since.
   */
  private async importToShared(shared: SharedState): Promise<void> {
    if (!(await shared.connection.firstImport())) return;
    const accessPath = join(this.options.dataDir, ACCESS_FILE);
    const file = readAccessFile(accessPath);
    const lists = await shared.access.load();
    if (
      Object.values(lists).every((list) => list.length === 0) &&
      file.approved.length + file.pending.length > 0
    ) {
      await shared.access.save(accessLists(file));
      retireFile(accessPath);
      console.error(
        `Agent: imported ${file.approved.length} approved senders from ${ACCESS_FILE} into Redis (the file is now ${ACCESS_FILE}.imported).`,
      );
    }
    const keysPath = join(this.options.dataDir, A2A_KEYS_FILE);
    if ((await shared.a2aKeys.importFile(keysPath)) > 0) retireFile(keysPath);
    const registrationPath = join(this.options.dataDir, REGISTRATION_FILE);
    const registered = readJsonFile<Registration>(registrationPath);
    const { record } = await shared.registration.load();
    if ((record ?? []).length === 0 && registered) {
      await shared.registration.save({ record: [{ key: 'current', value: registered }] });
      retireFile(registrationPath);
    }
  }

  private async reloadShared(topic: 'access' | 'registration' | 'keys'): Promise<void> {
    const shared = this.shared;
    if (!shared) return;
    try {
      if (topic === 'keys') this.keys.reload();
      else if (topic === 'access') {
        const since = this.access.store.changes;
        this.access.reload((await shared.access.load()) as unknown as Partial<AccessFile>, since);
        await this.reconcileHeld();
      } else {
        const { record } = await shared.registration.load();
        this.registrar.replace(record?.[0] as Registration | undefined);
      }
    } catch (error) {
      // Redis down: the console says so already; the next look (or Redis's return) reads it again.
      if (shared.health().up)
        console.error(`Agent: could not read the shared ${topic}: ${(error as Error).message}`);
    }
  }

  /** Starts listening on the agent port, then the tunnel if one is set; resolves with the local URL. */
  async start(): Promise<string> {
    if (this.shared) await this.startShared(this.shared);
    // A2A tasks an earlier run (or a stopped replica) left unfinished end failed; owed pushes are sent.
    await this.a2a.tasks.recover();
    this.listenUrl = await this.server.listen(this.settings.port, this.settings.host);
    this.invalidateCard();
    if (this.settings.tunnel !== 'none') this.startTunnel();
    // The gateway and the agent for callers: at start, then every 30 s (never per call).
    this.gatewayWatch.start(this.options.gatewayProbeMs ?? 30_000);
    return this.listenUrl;
  }

  /** Probes the gateway (health and agent list, never chat: each chat call costs a run). */
  probeGatewayNow(): Promise<GatewaySnapshot> {
    return this.gatewayWatch.probeNow();
  }

  get tunnelState(): TunnelState {
    return this.supervisor?.state ?? this.tunnelFailure ?? { status: 'off' };
  }

  /** Opens the configured tunnel (localtunnel or the operator's command) to the agent port only. */
  startTunnel(): void {
    if (this.supervisor) return;
    this.tunnelFailure = undefined;
    const port = Number(new URL(this.listenUrl).port || 80);
    let provider: TunnelProvider;
    try {
      provider = this.tunnelProvider();
    } catch (error) {
      this.tunnelFailure = { status: 'failed', reason: (error as Error).message };
      this.emit('tunnel', this.tunnelFailure);
      return;
    }
    const supervisor = new TunnelSupervisor({
      provider,
      port,
      subdomain: this.settings.subdomain,
      memory: this.tunnelAddress,
      checkReachability: (url) => checkReachable(url, this.card()),
      ...this.options.tunnel,
    });
    this.supervisor = supervisor;
    supervisor.on('state', (state) => {
      if (state.status === 'online') this.setTunnelUrl(state.url);
      if (state.status === 'off' || state.status === 'failed') this.setTunnelUrl(undefined);
      this.emit('tunnel', state);
    });
    supervisor.on('address', (change) => {
      this.setTunnelUrl(change.url);
      this.emit('address', change);
      void this.registrar.addressChanged(change.url);
    });
    supervisor.start();
  }

  stopTunnel(): void {
    const supervisor = this.supervisor;
    this.supervisor = undefined;
    this.tunnelFailure = undefined;
    // The supervisor announces `off` itself; without one, say it here.
    if (supervisor) supervisor.stop();
    else this.emit('tunnel', { status: 'off' });
    supervisor?.removeAllListeners();
    this.setTunnelUrl(undefined);
  }

  /** Registers the current public URL with the registry (after proving it reaches us). */
  register(): Promise<Registration> {
    return this.registrar.register(this.agentUrl);
  }

  selfTest(): Promise<SelfTestReport> {
    return runSelfTest(this);
  }

  private tunnelProvider(): TunnelProvider {
    if (this.settings.tunnel === 'command') {
      return new CommandProvider({
        command: this.settings.tunnelCommand ?? '',
        urlPattern: this.settings.tunnelUrlPattern,
      });
    }
    return new LocaltunnelProvider({
      host: this.settings.tunnelHost,
      stepTimeoutMs: this.options.tunnel?.stepTimeoutMs,
    });
  }

  private setTunnelUrl(url: string | undefined): void {
    if (url === this.tunnelUrl) return;
    this.tunnelUrl = url;
    this.invalidateCard();
  }

  /** Stops cleanly: in-flight work gets `shutdownGraceSeconds` (or `graceMs`) to finish, then fails. */
  async stop(graceMs = this.settings.shutdownGraceSeconds * 1000): Promise<void> {
    this.gatewayWatch.stop();
    clearInterval(this.sharedTimer);
    this.access.close();
    this.supervisor?.stop();
    await this.server.close(graceMs);
    await this.a2aKeys.close();
    this.shared?.close();
  }

  get currentSettings(): Settings {
    return this.settings;
  }

  /**
   * Applies changed settings to the running agent: gateway, trust, limits, card text and keys' TTL take
   * effect at once. Returns the names of changed settings that need a restart (the listening address).
   */
  updateSettings(change: Partial<Settings>): string[] {
    const before = this.settings;
    this.settings = { ...before, ...change };
    this.gateway = this.resolveGateway();
    // A new URL, token or model makes what was known stale: forget it.
    const gatewayChanged = (['gatewayUrl', 'gatewayToken', 'gatewayModel', 'gatewayAgent'] as const).some(
      (name) => name in change && change[name] !== before[name],
    );
    if (gatewayChanged) this.gatewayWatch.configure();
    if ('acceptedExposedAgent' in change) this.gatewayTarget.acceptanceChanged();
    this.peerKeys.setPinned(this.settings.trustedPeerKeys);
    this.peerKeys.setDevHttpPeers(this.settings.devHttpPeers);
    this.skills.update('chat', {
      trust: this.settings.chatTrust,
      allowedPeers: this.settings.chatTrust === 'trusted-peers' ? this.settings.allowedPeers : undefined,
    });
    this.keys.setCardTTL(this.settings.cardTTL);
    if (['access', 'allowedPeers'].some((name) => name in change)) this.emit('access', { kind: 'changed' });
    this.invalidateCard();
    this.server.applyLimits();
    // A changed tunnel setting takes effect by reopening the tunnel (the agent keeps serving meanwhile).
    const tunnelChanged = (
      ['tunnel', 'tunnelHost', 'subdomain', 'tunnelCommand', 'tunnelUrlPattern'] as const
    ).some((name) => name in change && change[name] !== before[name]);
    if (tunnelChanged && this.listenUrl && this.server.listening) {
      this.stopTunnel();
      if (this.settings.tunnel !== 'none') this.startTunnel();
    }
    return (['port', 'host', 'consolePort'] as const).filter(
      (name) => change[name] !== undefined && change[name] !== before[name],
    );
  }

  /** Where the agent is reached from outside: the tunnel's URL, else the public URL setting, else loopback. */
  get agentUrl(): string {
    if (this.tunnelUrl) return this.tunnelUrl;
    if (this.settings.publicUrl) return this.settings.publicUrl.replace(/\/+$/, '');
    // A server bound to every interface is still reached locally through loopback.
    return this.listenUrl.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://127.0.0.1:');
  }

  get localUrl(): string {
    return this.listenUrl;
  }

  /** The card as served now; rebuilt when keys, URL or settings change, and each second for key expiry. */
  card(): AgentCard {
    const now = this.now();
    if (this.cachedCard && this.cachedCard.until > now) return this.cachedCard.card;
    const card = buildCard({
      url: this.agentUrl,
      name: this.settings.agentName,
      version: AGENT_VERSION,
      description: this.settings.agentDescription,
      specializations: this.settings.specializations,
      models: [{ provider: 'openclaw', model: this.gateway.config.model }],
      skills: this.skills.definitions(),
      // Newest first; the oldest retired keys drop off so the card stays within the 32 keys peers accept.
      publicKeys: this.keys.publicKeys().slice(0, MAX_CARD_KEYS),
      rateLimit: {
        requestsPerMinute: this.settings.rpm,
        requestsPerSender: this.settings.perSender,
        tokensPerSenderPerDay: this.settings.tokensPerDay,
      },
      cardTTL: this.settings.cardTTL,
    });
    const changed = JSON.stringify(card) !== JSON.stringify(this.cachedCard?.card);
    this.cachedCard = { card, until: now + 1000 };
    if (changed) this.emit('card', card);
    return card;
  }

  gatewayConfig(): ResolvedGateway['config'] {
    return this.gateway.config;
  }

  /** Where the gateway's address and token in use come from (a setting, the environment, OpenClaw's config). */
  gatewaySource(): ResolvedGateway['source'] {
    return this.gateway.source;
  }

  /** Where the local OpenClaw config is (`OPENCLAW_CONFIG_PATH` or ~/.openclaw/openclaw.json), and the env it reads. */
  openclawConfig(): { path: string; env: NodeJS.ProcessEnv } {
    return { path: openclawConfigPath(this.env), env: this.env };
  }

  gatewayStatus(): GatewaySnapshot {
    return this.gatewayWatch.snapshot;
  }

  /** Where shared state lives and whether it answers: the data dir always does; Redis may be down. */
  stateHealth(): StateHealth {
    return this.shared?.health() ?? { backend: 'data-dir', up: true };
  }

  private resolveGateway(): ResolvedGateway {
    return resolveGatewayConfig(
      {
        url: this.settings.gatewayUrl,
        token: this.settings.gatewayToken,
        // An explicit model wins (gateways that are not OpenClaw); else the agent for callers.
        model: this.settings.gatewayModel ?? agentModel(this.settings.gatewayAgent),
        timeoutMs: this.settings.gatewayTimeoutMs,
      },
      this.env,
    );
  }

  private recordGatewayOutcome(outcome: GatewayOutcome): void {
    const { durationMs } = outcome;
    this.emit('gatewayCall', {
      ok: outcome.ok,
      ...(outcome.ok ? {} : { problem: outcome.error.problem }),
      ...(durationMs === undefined ? {} : { durationMs }),
    });
    this.gatewayWatch.called(outcome);
  }

  private invalidateCard(): void {
    this.cachedCard = undefined;
  }
}

// The access lists as shared records: one per sender in each list.
function accessLists(file: AccessFile) {
  return {
    approved: file.approved.map((record) => ({ key: record.sender, value: record })),
    pending: file.pending.map((record) => ({ key: record.sender, value: record })),
    denied: file.denied.map((record) => ({ key: record.sender, value: record })),
  };
}

function reportHeldFailure(error: unknown): void {
  console.error(`Agent: held tasks could not be updated: ${(error as Error).message}`);
}

// Renamed, not deleted: the operator keeps a copy, and it is never read again.
function retireFile(path: string): void {
  try {
    renameSync(path, `${path}.imported`);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}
