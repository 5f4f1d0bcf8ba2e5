import { EventEmitter } from 'node:events';
import { appAccess, type A2AKeys, type AccessControl } from './access/app-access.js';
import { screenPayload } from './access/injection-screen.js';
import { replicatedAccess } from './access/shared-access.js';
import { OwnCard } from './agent/own-card.js';
import { PeerKeyResolver } from './agent/peer-keys.js';
import { AgentServer } from './agent/server.js';
import { SkillRegistry } from './agent/skill-registry.js';
import type { AppEvents, AppOptions } from './app-contract.js';
import { createAppA2ADoor, type A2ADoor } from './a2a/app-door.js';
import { GatewayLink } from './bridge/gateway-link.js';
import type { GatewaySnapshot } from './bridge/gateway-state.js';
import type { GatewayTarget } from './bridge/gateway-target.js';
import type { GatewayWatch } from './bridge/gateway-watch.js';
import { HopGuard } from './calls/hop-guard.js';
import { KeyStore } from './keys/keystore.js';
import { ensureDir } from './lib/atomic-file.js';
import { OutboundBudget } from './mcp/outbound-budget.js';
import { OutboundCalls } from './mcp/outbound.js';
import type { AgentCard } from './protocol/index.js';
import { Registrar, type Registration } from './registry/registration.js';
import { replicatedRegistration, sharedRegistrationSave } from './registry/shared-registration.js';
import { runSelfTest, type SelfTestReport } from './self-test.js';
import type { Settings } from './settings/schema.js';
import type { StateHealth } from './state/redis-connection.js';
import { ReplicaSync } from './state/replica-sync.js';
import { SharedState } from './state/shared-state.js';
import { PublishedSkills } from './skills/published-skills.js';
import { PublicAddress } from './tunnel/public-address.js';
import type { TunnelState } from './tunnel/state.js';
import packageJson from '../package.json' with { type: 'json' };

export type { GatewayTransition } from './bridge/gateway-state.js';
export type { AppEvents, AppOptions } from './app-contract.js';
export const AGENT_VERSION: string = packageJson.version;

/**
 * The composition root: builds every part from settings (keys, access, the gateway, the agent server, the
 * public address, shared state), connects them, starts and stops them, and emits what happens. Wiring only:
 * each part's logic lives in its own folder.
 */
export class AgentBridgeApp extends EventEmitter<AppEvents> {
  readonly keys: KeyStore;
  /** SAMVAD's skills: chat, the published skills (kept in step by `published`), a test's own. */
  readonly skills = new SkillRegistry();
  /** The skills the operator published, chat first: the cards, both doors and the Skills page read them. */
  readonly published: PublishedSkills;
  readonly server: AgentServer;
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
  /** The hop guard across agents: the chains of calls in (both doors) and out (the MCP tools). */
  readonly chains: HopGuard;
  /** Where the agent is reached from outside: the tunnel's life, the public URL. */
  readonly publicAddress: PublicAddress;
  /** The A2A front door on the agent port: its card, transports and tasks. */
  readonly a2a: A2ADoor;
  /** State shared with other replicas on Redis (`redisUrl`); without it, the data dir holds everything. */
  readonly shared: SharedState | undefined;
  private readonly sync: ReplicaSync | undefined;
  private readonly ownCard: OwnCard;
  private readonly peerKeys: PeerKeyResolver;
  /** The gateway: where it is, the agent callers reach on it (`target`) and its one state (`watch`). */
  readonly gateway: GatewayLink;
  private settings: Settings;
  /** `serve --demo`: a stand-in gateway answers (the console says so; the card's description is the demo's). */
  readonly demo: boolean;

  constructor(private readonly options: AppOptions) {
    super();
    const { dataDir } = options;
    const now = options.now ?? Date.now;
    ensureDir(dataDir);
    this.settings = options.settings;
    this.demo = options.demo ?? false;
    const settings = () => this.settings;
    this.chains = new HopGuard({ hopLimit: () => this.settings.hopLimit, now });
    this.gateway = new GatewayLink({
      settings,
      env: options.env ?? process.env,
      now,
      onTransition: (transition) => this.emit('gateway', transition),
      onAgent: (view) => this.emit('gatewayAgent', view),
      onCall: (event) => this.emit('gatewayCall', event),
      classify: options.classifyAgentTools,
      onSkills: () => this.emit('skills'),
    });
    this.gatewayTarget = this.gateway.target;
    this.gatewayWatch = this.gateway.watch;
    const card = () => this.card();
    const { cardTTL, keysFile } = settings();
    this.keys = KeyStore.open(dataDir, { cardTTLSeconds: cardTTL, now, path: keysFile });
    this.ownCard = new OwnCard({
      url: () => this.agentUrl,
      settings,
      model: () => this.gateway.current.config.model,
      skills: this.skills,
      keys: this.keys,
      version: AGENT_VERSION,
      now,
      onChange: (changed) => this.emit('card', changed),
    });
    this.publicAddress = new PublicAddress({
      dataDir,
      settings,
      card,
      timing: options.tunnel,
      now,
      onState: (state) => this.emit('tunnel', state),
      onAddress: (change) => {
        this.emit('address', change);
        void this.registrar.addressChanged(change.url);
      },
      onUrl: () => this.ownCard.invalidate(),
    });
    const shared = (this.shared = SharedState.fromSettings(settings, options));
    this.published = new PublishedSkills({
      settings,
      gateway: this.gateway,
      registry: this.skills,
      publicUrl: () => this.publicAddress.publicUrl,
      now,
      extra: options.extraSkills,
    });
    const isOwnId = (id: string) => id === this.card().id;
    const peerKeys = (this.peerKeys = new PeerKeyResolver({
      pinned: settings().trustedPeerKeys,
      devHttpPeers: settings().devHttpPeers,
      now,
      self: {
        isOwnId,
        key: (kid) => this.keys.verificationKey(kid),
        kids: () => this.keys.publicKeys().map((entry) => entry.kid),
      },
      trusted: (sender) => this.access.trusts(sender),
    }));
    this.registrar = new Registrar({
      dataDir,
      registryUrl: () => this.settings.registryUrl,
      checkReachable: (url) => this.publicAddress.checkReachable(url),
      onState: (state) => this.emit('registry', state),
      shared: shared && sharedRegistrationSave(shared.registration),
    });
    ({ access: this.access, a2aKeys: this.a2aKeys } = appAccess({
      dataDir,
      settings,
      isOwnId,
      describe: (sender) => peerKeys.describe(sender),
      heldTasks: {
        run: (ids) => this.server.runHeld(ids),
        fail: (ids, message) => this.server.failHeld(ids, message),
        list: () => this.server.heldTasks(),
      },
      shared,
      skills: () => this.published.ids(),
      onChange: (change) => this.emit('access', change),
      now,
      limits: options.accessLimits,
    }));
    this.server = new AgentServer({
      dataDir,
      card,
      signer: () => this.keys.signer,
      skills: this.skills,
      peerKeys,
      settings,
      access: this.access.gate,
      screen: screenPayload,
      chains: this.chains,
      taskLimits: options.taskLimits,
      state: shared && { limits: shared.limits, tasks: shared.tasks, recoverEveryMs: shared.recoverEveryMs },
      intake: options.intake,
      listener: options.listener,
      gatewayStatus: () => this.gateway.current.status,
      gatewayServing: () => this.gatewayWatch.serving(),
      stateUp: () => this.stateHealth().up,
      publicAddress: () => this.publicAddress.health(),
      agentVersion: AGENT_VERSION,
      events: { envelope: (e) => this.emit('envelope', e), callback: (e) => this.emit('callback', e) },
      devHttpPeers: settings().devHttpPeers,
      callbacks: options.callbacks,
      keepAliveMs: options.keepAliveMs,
      now,
    });
    this.a2a = createAppA2ADoor(this, {
      gateway: this.gateway.turn,
      version: AGENT_VERSION,
      keepAliveMs: options.keepAliveMs,
      now,
      onCallback: (event) => this.emit('callback', event),
      onCall: (event) => this.emit('envelope', event),
      knocks: { dataDir, limits: options.knockLimits },
      onAccess: (change) => this.emit('access', change),
    });
    this.server.mount(this.a2a.mounted);
    this.outbound = new OutboundCalls({
      identity: () => ({ id: this.card().id, signer: this.keys.signer }),
      settings,
      onEvent: (event) => this.emit('outbound', event),
      chains: this.chains,
      budget: new OutboundBudget({ dataDir, settings, now }),
      now,
    });
    // On Redis, once the lists are loaded (ReplicaSync), and at each reload of them.
    if (!shared) void this.access.reconcileHeld();
    this.sync =
      shared &&
      new ReplicaSync({
        shared,
        dataDir,
        keys: this.keys,
        access: replicatedAccess(this.access, shared.access, dataDir),
        registration: replicatedRegistration(this.registrar, shared.registration, dataDir),
        onHealth: (health) => this.emit('state', health),
      });
  }

  /** Starts listening on the agent port, then the tunnel if one is set; resolves with the local URL. */
  async start(): Promise<string> {
    await this.sync?.start();
    // A2A tasks an earlier run (or a stopped replica) left unfinished end failed; owed pushes are sent.
    await this.a2a.tasks.recover();
    this.publicAddress.listening(await this.server.listen(this.settings.port, this.settings.host));
    // The gateway and the agent for callers: at start, then every 30 s (never per call).
    this.gatewayWatch.start(this.options.gatewayProbeMs ?? 30_000);
    return this.publicAddress.localUrl;
  }

  /** Stops cleanly: in-flight work gets `shutdownGraceSeconds` (or `graceMs`) to finish, then fails. */
  async stop(graceMs = this.settings.shutdownGraceSeconds * 1000): Promise<void> {
    this.gateway.stop();
    this.sync?.stop();
    this.access.close();
    this.publicAddress.close();
    await this.server.close(graceMs);
    await this.a2aKeys.close();
    this.outbound.budget.flush();
    this.shared?.close();
  }

  /**
   * Applies changed settings to the running agent: gateway, trust, limits, card text, keys' TTL and the
   * tunnel take effect at once; the listening addresses at the next start (the console tells which).
   */
  updateSettings(change: Partial<Settings>): void {
    const before = this.settings;
    this.settings = { ...before, ...change };
    this.gateway.settingsChanged(change, before);
    this.peerKeys.setPinned(this.settings.trustedPeerKeys);
    this.peerKeys.setDevHttpPeers(this.settings.devHttpPeers);
    this.published.sync();
    this.keys.setCardTTL(this.settings.cardTTL);
    if (['access', 'allowedPeers'].some((name) => name in change)) this.emit('access', { kind: 'changed' });
    this.ownCard.invalidate();
    this.server.applyLimits();
    this.publicAddress.settingsChanged(before, this.server.listening);
  }

  /** The card as served now (agent/own-card.ts). */
  card(): AgentCard {
    return this.ownCard.card();
  }

  /** Where the agent is reached from outside: the tunnel's URL, else the public URL setting, else loopback. */
  get agentUrl(): string {
    return this.publicAddress.url;
  }

  get localUrl(): string {
    return this.publicAddress.localUrl;
  }

  get tunnelState(): TunnelState {
    return this.publicAddress.state;
  }

  get currentSettings(): Settings {
    return this.settings;
  }

  /** Registers the current public URL with the registry (after proving it reaches us). */
  register(): Promise<Registration> {
    return this.registrar.register(this.agentUrl);
  }

  selfTest(): Promise<SelfTestReport> {
    return runSelfTest({
      url: this.agentUrl,
      card: this.card(),
      signer: this.keys.signer,
      timeoutMs: this.settings.gatewayTimeoutMs + 5000,
      gatewayProblem: () => this.gatewayTarget.problem() ?? this.gatewayStatus().problem,
    });
  }

  gatewayStatus(): GatewaySnapshot {
    return this.gatewayWatch.snapshot;
  }

  /** Where shared state lives and whether it answers: the data dir always does; Redis may be down. */
  stateHealth(): StateHealth {
    return this.shared?.health() ?? { backend: 'data-dir', up: true };
  }
}
