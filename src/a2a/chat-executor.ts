import { TaskState, type Artifact, type TaskStatus } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { A2AError } from '@a2a-js/sdk/errors';
import { ProtocolError } from '../protocol/index.js';
import { callerOf, scopeOf } from './call-context.js';
import type { A2ACaller, ChatCore, ChatReply } from './chat-core.js';
import { INLINE_ONLY } from '../calls/attachments.js';
import { agentMessage, messageContent, textPart } from './message-text.js';
import { messageChain } from './chain-metadata.js';

/** The one artifact a chat task produces: the reply. */
export const REPLY_ARTIFACT_ID = 'reply';

/** The reason a CancelTask aborts a run with (any other abort is the agent shutting down). */
class CanceledByCaller extends Error {
  constructor() {
    super('Canceled by the caller.');
  }
}

export interface ChatExecutorOptions {
  /** A failure that is not the caller's to read (a bug, an unexpected gateway error), for the operator's log. */
  onError?(taskId: string, error: unknown): void;
}

/**
 * Runs each A2A message as one chat turn through the shared core, as one task: `working` at once, the
 * reply's deltas as artifact updates (token by token, as our SSE stream does; a blocking send, whose task
 * nobody sees before it ends, asks the gateway for the whole reply instead and is published once, ended),
 * then the whole reply as the artifact's last chunk (so a task read later holds one text part, not one per
 * token), then `completed`.
 * CancelTask aborts the core's signal (the gateway call stops) and ends the task `canceled` at once,
 * whatever the core does afterwards. It never throws: the SDK would turn the error's text into the task's
 * status message, which must say only what a caller may read.
 */
export class ChatExecutor<C extends A2ACaller> implements AgentExecutor {
  /** Runs in flight here: how to stop each, its context (a cancel's status event names it) and its bus. */
  private readonly running = new Map<
    string,
    { controller: AbortController; contextId: string; bus: ExecutionEventBus }
  >();

  constructor(
    private readonly core: ChatCore<C>,
    private readonly options: ChatExecutorOptions = {},
  ) {}

  /** Runs in flight here (their tasks would end `failed` if the process stopped now). */
  get activeCount(): number {
    return this.running.size;
  }

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = request;
    const controller = new AbortController();
    this.running.set(taskId, { controller, contextId, bus });
    // A quiet task (a blocking send) is seen by nobody before it ends: one event, the finished task.
    const quiet = scopeOf(request.context).quiet;
    // A follow-up to a task that waited (its caller's input) continues it: its history goes on.
    const before = request.task?.history.filter(
      (message) => message.messageId !== request.userMessage.messageId,
    );
    const history = [...(before ?? []), request.userMessage];
    const end = (state: TaskState, ending: { text?: string; reply?: string; usage?: ChatReply['usage'] }) => {
      const last = status(taskId, contextId, state, ending.text);
      const metadata = ending.usage ? { usage: ending.usage } : undefined;
      if (quiet) {
        const ended = last.message ? [...history, last.message] : history;
        const artifacts = ending.reply === undefined ? [] : [replyArtifact(ending.reply)];
        bus.publish(
          AgentEvent.task({ id: taskId, contextId, status: last, artifacts, history: ended, metadata }),
        );
        return;
      }
      if (ending.reply !== undefined) {
        bus.publish(artifactUpdate(taskId, contextId, ending.reply, { append: false, lastChunk: true }));
      }
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: last, metadata }));
    };
    // Aborted: a cancel ended the task already; otherwise the agent is stopping (or stopped the run).
    const stopped = () => {
      if (controller.signal.reason instanceof CanceledByCaller) return;
      end(TaskState.TASK_STATE_FAILED, {
        text: 'The agent stopped before this task finished; send the message again.',
      });
    };
    try {
      if (!quiet) {
        bus.publish(
          AgentEvent.task({
            id: taskId,
            contextId,
            status: status(taskId, contextId, TaskState.TASK_STATE_WORKING),
            artifacts: [],
            history,
            metadata: undefined,
          }),
        );
      }
      let first = true;
      const onDelta = (text: string) => {
        if (controller.signal.aborted || text === '') return;
        bus.publish(artifactUpdate(taskId, contextId, text, { append: !first, lastChunk: false }));
        first = false;
      };
      // As the gate admitted it (its images sent by URL fetched); parsed here only if it never was.
      const content = scopeOf(request.context).content ?? messageContent(request.userMessage, INLINE_ONLY);
      const turn = {
        message: content.text,
        images: content.images,
        contextId,
        taskId,
        chain: messageChain(request.userMessage),
      };
      const reply = await this.core.run(callerOf<C>(request.context), turn, {
        signal: controller.signal,
        onDelta: quiet ? undefined : onDelta,
      });
      if (controller.signal.aborted) return stopped();
      end(TaskState.TASK_STATE_COMPLETED, { reply: reply.reply, usage: reply.usage });
    } catch (error) {
      if (controller.signal.aborted) return stopped();
      if (!(error instanceof ProtocolError || error instanceof A2AError))
        this.options.onError?.(taskId, error);
      end(TaskState.TASK_STATE_FAILED, { text: failureText(error) });
    } finally {
      this.running.delete(taskId);
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const run = this.running.get(taskId);
    // Finished a moment ago: the SDK settles the bus next and reports the task not cancelable.
    if (!run) return;
    const { controller, contextId } = run;
    controller.abort(new CanceledByCaller());
    // The SDK waits for a terminal event on this bus; the core may take a while to unwind.
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(taskId, contextId, TaskState.TASK_STATE_CANCELED, 'Canceled by the caller.'),
        metadata: undefined,
      }),
    );
  };

  /**
   * Cancels a run of this process by its task id alone (a cancel relayed from another replica), as
   * CancelTask would; false when no such run is in flight here.
   */
  cancelRun(taskId: string): boolean {
    const run = this.running.get(taskId);
    if (!run) return false;
    void this.cancelTask(taskId, run.bus);
    return true;
  }

  /** Aborts every run in flight (the agent is stopping): their tasks end `failed`. */
  abortAll(reason: Error): void {
    for (const { controller } of this.running.values()) controller.abort(reason);
  }
}

function status(taskId: string, contextId: string, state: TaskState, text?: string): TaskStatus {
  return {
    state,
    message: text === undefined ? undefined : agentMessage(taskId, contextId, text),
    timestamp: new Date().toISOString(),
  };
}

function artifactUpdate(
  taskId: string,
  contextId: string,
  text: string,
  chunk: { append: boolean; lastChunk: boolean },
) {
  return AgentEvent.artifactUpdate({
    taskId,
    contextId,
    artifact: replyArtifact(text),
    ...chunk,
    metadata: undefined,
  });
}

/** The reply as the task keeps it: one artifact, one text part. */
export function replyArtifact(text: string): Artifact {
  return {
    artifactId: REPLY_ARTIFACT_ID,
    name: 'reply',
    description: '',
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
  };
}

function failureText(error: unknown): string {
  if (error instanceof ProtocolError) return error.message;
  if (error instanceof A2AError) return error.message;
  return 'The agent failed to answer; the operator can see why in the agent log.';
}
