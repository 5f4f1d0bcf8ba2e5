import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AGENT_VERSION, type AgentBridgeApp, type AppEvents } from '../app.js';
import { GATEWAY_CONDITIONS } from '../bridge/gateway-state.js';
import { PIPELINE_STEPS, type TunnelStatus } from '../protocol/console-api.js';
import { CALLBACK_OUTCOMES, MODES, PROTOCOLS, TUNNEL_STATUSES, bounded, envelopeLabels } from './labels.js';

export interface MetricsOptions {
  app: AgentBridgeApp;
  /** The tunnel as the console shows it (a tunnel that failed to start included); default the app's. */
  tunnel?: () => TunnelStatus;
  /** The process's own metrics (CPU, memory, event loop, GC) beside the bridge's; default true. */
  processMetrics?: boolean;
}

export interface BridgeMetrics {
  /** The Prometheus text format's media type, for the response's Content-Type. */
  readonly contentType: string;
  /** Every metric in the text format; the gauges are read from the app now. */
  text(): Promise<string>;
  /** Stops listening to the app's events (the counters keep their values). */
  close(): void;
}

/** From milliseconds to ten minutes: a refusal takes microseconds, an LLM reply can take minutes. */
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];

/**
 * The bridge's metrics for Prometheus, in a registry of their own (never prom-client's global one: each app
 * has its counters, so several apps in one process never mix). Counters and histograms follow the app's
 * events; gauges are read when scraped.
 */
export function createMetrics(options: MetricsOptions): BridgeMetrics {
  const { app } = options;
  const tunnel = options.tunnel ?? (() => app.tunnelState);
  const registry = new Registry();
  const registers = [registry];

  const requests = new Counter({
    name: 'agent_bridge_requests_total',
    help: 'Calls received (SAMVAD envelopes, A2A requests), by protocol, mode, verdict (accepted, held, refused) and the step that refused them.',
    labelNames: ['protocol', 'mode', 'verdict', 'step'] as const,
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'agent_bridge_request_duration_seconds',
    help: 'Time from receiving a call to its answer (async: to the 202; A2A streams: to their end), by protocol, mode and verdict.',
    labelNames: ['protocol', 'mode', 'verdict'] as const,
    buckets: SECONDS_BUCKETS,
    registers,
  });
  const gatewaySeconds = new Histogram({
    name: 'agent_bridge_gateway_call_duration_seconds',
    help: 'Chat calls to the gateway, by outcome (ok or error): calls stopped before the gateway are not timed.',
    labelNames: ['outcome'] as const,
    buckets: SECONDS_BUCKETS,
    registers,
  });
  const gatewayErrors = new Counter({
    name: 'agent_bridge_gateway_errors_total',
    help: 'Chat calls that failed at or before the gateway, by problem (GATEWAY.md failure table).',
    labelNames: ['problem'] as const,
    registers,
  });
  const outbound = new Counter({
    name: 'agent_bridge_outbound_calls_total',
    help: "Calls the operator's own agent made through the bridge (MCP), by protocol, mode, verdict and refusing step.",
    labelNames: ['protocol', 'mode', 'verdict', 'step'] as const,
    registers,
  });
  const callbacks = new Counter({
    name: 'agent_bridge_callbacks_total',
    help: 'Callback deliveries of async task results, by outcome.',
    labelNames: ['outcome'] as const,
    registers,
  });
  // Known series start at zero, so rate() and absent-series alerts work from the first scrape.
  for (const protocol of PROTOCOLS) {
    for (const mode of MODES) {
      requests.inc({ protocol, mode, verdict: 'accepted', step: 'none' }, 0);
      for (const step of PIPELINE_STEPS) requests.inc({ protocol, mode, verdict: 'refused', step }, 0);
    }
  }
  requests.inc({ protocol: 'samvad', mode: 'async', verdict: 'held', step: 'none' }, 0);
  for (const outcome of CALLBACK_OUTCOMES) callbacks.inc({ outcome }, 0);

  new Gauge({
    name: 'agent_bridge_info',
    help: 'The running Agent Bridge version (always 1).',
    labelNames: ['version'] as const,
    registers,
  }).set({ version: AGENT_VERSION }, 1);
  new Gauge({
    name: 'agent_bridge_gateway_up',
    help: 'Whether the gateway answers: 1 when its condition (the latest of health probes and chat calls) is up.',
    registers,
    collect() {
      this.set(app.gatewayStatus().condition === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'agent_bridge_gateway_state',
    help: 'The gateway, one-hot: up, down, token-wrong, agent-missing, failing, unknown (not checked yet) or not-configured.',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const now = app.gatewayStatus().condition;
      for (const state of GATEWAY_CONDITIONS) this.set({ state }, state === now ? 1 : 0);
    },
  });
  new Gauge({
    name: 'agent_bridge_tunnel_status',
    help: 'The tunnel, one-hot: off, connecting, online, reconnecting or failed.',
    labelNames: ['status'] as const,
    registers,
    collect() {
      const now = tunnel().status;
      for (const status of TUNNEL_STATUSES) this.set({ status }, status === now ? 1 : 0);
    },
  });
  new Gauge({
    name: 'agent_bridge_pending_approvals',
    help: "Senders waiting for the operator's approval (access policy pairing).",
    registers,
    collect() {
      this.set(app.access.summary().pending);
    },
  });
  new Gauge({
    name: 'agent_bridge_state_backend_up',
    help: 'Whether shared state answers (data-dir always; redis while it answers), by backend.',
    labelNames: ['backend'] as const,
    registers,
    collect() {
      const health = app.stateHealth();
      this.reset();
      this.set({ backend: health.backend }, health.up ? 1 : 0);
    },
  });

  const unsubscribe = [
    on(app, 'envelope', (event) => {
      const labels = envelopeLabels(event);
      requests.inc(labels);
      const { protocol, mode, verdict } = labels;
      requestSeconds.observe({ protocol, mode, verdict }, event.durationMs / 1000);
    }),
    on(app, 'outbound', (event) => outbound.inc(envelopeLabels(event))),
    on(app, 'callback', (event) => callbacks.inc({ outcome: bounded(event.outcome, CALLBACK_OUTCOMES) })),
    on(app, 'gatewayCall', (call) => {
      if (call.durationMs !== undefined)
        gatewaySeconds.observe({ outcome: call.ok ? 'ok' : 'error' }, call.durationMs / 1000);
      if (!call.ok) gatewayErrors.inc({ problem: call.problem ?? 'other' });
    }),
  ];

  const exposed = options.processMetrics === false ? registry : Registry.merge([registry, processMetrics()]);
  return {
    contentType: exposed.contentType,
    text: () => exposed.metrics(),
    close: () => {
      for (const stop of unsubscribe.splice(0)) stop();
    },
  };
}

let processRegistry: Registry | undefined;

/**
 * prom-client's default metrics (process_cpu_seconds_total, nodejs_heap_size_used_bytes, ...), collected
 * once per process: they describe the process, not one app, and their collectors (a GC observer, an event
 * loop monitor) are never stopped, so each app shares them rather than starting its own.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** app.on with its matching off. */
function on<K extends keyof AppEvents>(
  app: AgentBridgeApp,
  name: K,
  listener: (...args: AppEvents[K]) => void,
): () => void {
  // Node's typings cannot narrow their conditional listener type through a generic K; the call is sound.
  app.on(name, listener as never);
  return () => app.off(name, listener as never);
}
