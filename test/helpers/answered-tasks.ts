import { ProtocolError } from '../../src/protocol/index.js';
import type { TaskStore } from '../../src/state/task-store.js';
import type { TaskMeta, TaskOutcome } from '../../src/state/tasks.js';

// An A2A task as the data dir's journal of answered tasks holds it: created ended, with its reply.

export const a2aTaskMeta = (owner = 'a2a-key:alice'): TaskMeta => ({
  sender: owner,
  skill: 'chat',
  traceId: '',
  spanId: '',
  protocol: 'a2a',
  a2a: {
    contextId: 'ctx-1',
    state: 'TASK_STATE_WORKING',
    updatedAt: new Date().toISOString(),
    doc: { note: 'working' },
  },
});

export const answered = (reply: string): TaskOutcome => ({
  a2a: {
    contextId: 'ctx-1',
    state: 'TASK_STATE_COMPLETED',
    updatedAt: new Date().toISOString(),
    doc: { reply },
  },
  completed: true,
});

/**
 * Drops the owner's oldest droppable finished task the way its cap does (the store drops for no other
 * reason): an admission one past the cap, as if `maxPerSender - held` of its sends were running. `held`:
 * how many tasks the owner holds, when the caller knows (counting lists every one). False when none could
 * be dropped (the admission is then refused).
 */
export function dropOldestAtCap(store: TaskStore, owner = 'a2a-key:alice', held?: number): boolean {
  const count = () => store.listA2A(owner, { limit: 1 }).total;
  const before = held ?? count();
  try {
    store.admitA2A(owner, 86_400_000, { mine: store.maxPerSender - before, all: 0 });
  } catch (error) {
    if (error instanceof ProtocolError && error.httpStatus === 429) return false;
    throw error;
  }
  return held === undefined ? count() < before : true;
}
