import { createA2ATasks, type A2ATasks, type A2ATasksOptions } from './a2a-tasks.js';
import type { A2ACardInput } from './agent-card.js';
import type { CardRouteOptions } from './card-route.js';
import { A2AFrontDoor } from './front-door.js';
import type { A2AKeyCaller } from './key-gate.js';
import type { EnvelopeEvent } from '../agent/events.js';
import type { MountedDoor } from '../agent/server.js';
import type { SseOptions } from '../agent/sse.js';
import { A2ACalls, type A2ACallsOptions } from './shared-core.js';

export interface A2ADoorOptions extends Omit<CardRouteOptions, 'card'> {
  /** The card's inputs as they are now (public URL, names; `keylessAllowed` under the `open` policy). */
  card(): A2ACardInput;
  calls: A2ACallsOptions;
  tasks: A2ATasksOptions;
  bodyLimitBytes(): number;
  sse?: SseOptions;
  onError(error: unknown): void;
  /** Each A2A request as a traffic entry (the app's `envelope` event, `protocol: 'a2a'`). */
  onCall(event: EnvelopeEvent): void;
}

export interface A2ADoor {
  frontDoor: A2AFrontDoor<A2AKeyCaller>;
  tasks: A2ATasks;
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
  const calls = new A2ACalls(options.calls);
  const frontDoor = new A2AFrontDoor<A2AKeyCaller>({
    ...tasks.door,
    card: options.card,
    signer: options.signer,
    publicKeys: options.publicKeys,
    cardTTLSeconds: options.cardTTLSeconds,
    gate: calls,
    core: calls,
    bodyLimitBytes: options.bodyLimitBytes,
    sse: options.sse,
    onError: options.onError,
    onCall: options.onCall,
  });
  return {
    frontDoor,
    tasks,
    mounted: {
      owns: (path) => frontDoor.owns(path),
      handle: (req, res) => frontDoor.handle(req, res),
      activeRuns: () => frontDoor.executor.activeCount,
      abort: () => frontDoor.close(),
      close: () => tasks.close(),
    },
  };
}
