import type { RedisConnection } from '../state/redis-connection.js';

/**
 * Cancels across replicas: the SDK cancels a run of its own process only, so a cancel that reaches a
 * replica not running the task is told to every replica (Redis pub/sub), and the one running it stops it.
 */
export class CancelRelay {
  private cancelHere: ((taskId: string) => boolean) | undefined;
  private readonly listener = (topic: string, taskId: string) => {
    if (topic === 'a2a-cancel') this.cancelHere?.(taskId);
  };

  constructor(private readonly connection: RedisConnection) {
    connection.on('signal', this.listener);
  }

  /** Asks the replica running `taskId` to cancel it (rejects while Redis is down). */
  request(taskId: string): Promise<void> {
    return this.connection.signal('a2a-cancel', taskId);
  }

  /** How this replica cancels a run of its own (false: it runs no such task). */
  serve(cancelHere: (taskId: string) => boolean): void {
    this.cancelHere = cancelHere;
  }

  close(): void {
    this.connection.off('signal', this.listener);
  }
}
