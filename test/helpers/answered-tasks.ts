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
