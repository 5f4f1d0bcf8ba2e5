import { isLoopbackHost } from '../protocol/index.js';
import type { CallbackEvent } from '../agent/events.js';
import { WebhookSender, WebhookUrlError, webhookRules, type WebhookOptions } from '../lib/webhook.js';
import { A2ARecords, type A2ATaskRecord } from '../state/a2a-records.js';
import type { RedisConnection } from '../state/redis-connection.js';
import type { TaskState } from '../state/tasks.js';
import { CancelRelay } from './cancel-relay.js';
import type { A2ACaller } from './chat-core.js';
import type { A2AFrontDoorOptions } from './front-door.js';
import { PushDelivery } from './push-delivery.js';
import { finalNotifications } from './push-sender.js';
import { A2APushConfigs, storedConfigs } from './push-store.js';
import { A2ATaskStore, taskOf } from './task-store.js';

export interface A2ATasksOptions {
  /** The task state SAMVAD uses too (the agent server's `tasks`): the data dir, or Redis. */
  taskState: TaskState;
  /**
   * With replicas (Redis): cancels are relayed to the replica running the task, a running task's form is
   * written at most once a second (another replica may be polled), and lapsed leases are looked for.
   */
  replicas?: { connection: RedisConnection; recoverEveryMs: number };
  /** How long finished tasks are kept (the task state's retention, SAMVAD's too). */
  retentionMs(): number;
  push: {
    /** Loopback push URLs (also over http) for local testing, as for SAMVAD peers. */
    devHttpPeers: boolean;
    /** Every delivery attempt, for the operator's callback log. */
    onEvent?(event: CallbackEvent): void;
    /** Test seams: the final notification's retry waits (the callback backoff by default), DNS. */
    backoffMs?: number[];
    timeoutMs?: number;
    resolveHost?: WebhookOptions['resolveHost'];
  };
  /** How long a relayed cancel waits for the running replica (default 5 s). */
  cancelWaitMs?: number;
  /** Failures that are nobody's request (a recovery or a recording that failed), for the operator's log. */
  onError?(error: unknown): void;
}

/** What the A2A front door takes from here. */
export type A2ATaskDoorOptions = Pick<
  A2AFrontDoorOptions<A2ACaller>,
  'tasks' | 'taskCapacity' | 'pushConfigs' | 'deliverPush' | 'pushUrlProblem' | 'replicas'
>;

export interface A2ATasks {
  /** Spread into `new A2AFrontDoor({ ...a2aTasks.door, card, signer, ... })`. */
  door: A2ATaskDoorOptions;
  store: A2ATaskStore;
  /**
   * Tasks cut short end `failed` (once) and final notifications still owed are sent. Call once at start,
   * after Redis is connected; with replicas it then looks again every `recoverEveryMs`.
   */
  recover(): Promise<void>;
  /** Stops the looks, the writes and the deliveries (after the front door's close, before the task state's). */
  close(): void;
}

/**
 * A2A tasks in the project's task stores: the SDK's TaskStore and push config store over the task state
 * SAMVAD uses (caps, leases, recovery, retention and sweeps shared), push notifications by the webhook rules
 * SAMVAD callbacks follow (the final one delivered once, by the replica that ended or recovered the task),
 * and, with replicas, cancels relayed to the replica running the task. Sweeping is the task state's own
 * (the agent server sweeps it for both protocols).
 */
export function createA2ATasks(options: A2ATasksOptions): A2ATasks {
  const records = new A2ARecords(options.taskState, { retentionMs: options.retentionMs });
  const report = (error: unknown) => options.onError?.(error);
  const push = options.push;
  const webhook = (backoffMs?: number[]) =>
    new WebhookSender({
      name: 'the URL',
      ...webhookRules(push.devHttpPeers),
      onEvent: push.onEvent,
      timeoutMs: push.timeoutMs,
      resolveHost: push.resolveHost,
      backoffMs,
    });
  const final = webhook(push.backoffMs);
  // Progress is superseded by the next event: one retry, a second later.
  const progress = webhook(push.backoffMs ? push.backoffMs.slice(0, 1) : [1000]);
  const delivery = new PushDelivery({ progress, final });
  const relay = options.replicas && new CancelRelay(options.replicas.connection);

  let closed = false;
  // Owed, so never dropped: while the store does not answer, its configs are asked for again.
  const configsOf = async (taskId: string) => {
    for (;;) {
      try {
        return storedConfigs(await records.pushConfigs(taskId));
      } catch (error) {
        if (closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1000).unref());
      }
    }
  };
  const deliverFinal = async (record: A2ATaskRecord): Promise<void> => {
    const task = taskOf(record);
    const notifications = configsOf(record.id).then((configs) => finalNotifications(task, configs));
    const firstAttempt = (record.finalPush?.attempts ?? 0) + 1;
    const { outcome, attempts } = await delivery.final(record.id, notifications, firstAttempt);
    await records.delivered(record.id, outcome === 'interrupted' ? 'pending' : outcome, attempts);
  };
  const owe = (record: A2ATaskRecord) => void deliverFinal(record).catch(report);

  const store = new A2ATaskStore(records, {
    flushEveryMs: options.replicas ? 1000 : undefined,
    relayCancel: relay && ((taskId) => relay.request(taskId)),
    cancelWaitMs: options.cancelWaitMs,
    onOwed: owe,
  });

  let looking: NodeJS.Timeout | undefined;
  const recoverOnce = async () => {
    for (const record of await records.recover()) owe(record);
  };

  return {
    door: {
      tasks: store,
      taskCapacity: (owner) => store.admit(owner),
      pushConfigs: new A2APushConfigs(records),
      deliverPush: delivery.send,
      pushUrlProblem: (url) => pushUrlProblem(final, url),
      replicas: relay && {
        cancelElsewhere: (taskId, context) => store.cancelElsewhere(taskId, context),
        serve: (cancelHere) => relay.serve(cancelHere),
      },
    },
    store,
    async recover() {
      if (options.replicas && !looking) {
        // While Redis does not answer, a look fails and the next one tries again.
        const every = options.replicas.recoverEveryMs;
        looking = setInterval(() => void recoverOnce().catch(() => undefined), every);
        looking.unref();
      }
      await recoverOnce();
    },
    close() {
      closed = true;
      clearInterval(looking);
      store.close();
      relay?.close();
      delivery.close();
    },
  };
}

/** Why a push URL is refused at set time (the webhook rules, without DNS), or undefined. */
function pushUrlProblem(webhook: WebhookSender, raw: string): string | undefined {
  try {
    webhook.check(raw);
    return undefined;
  } catch (error) {
    if (!(error instanceof WebhookUrlError)) throw error;
    const loopback = URL.canParse(raw) && isLoopbackHost(new URL(raw).hostname);
    return loopback ? `${error.message} (loopback only with --dev-http-peers, for testing)` : error.message;
  }
}
