import { connect } from 'node:net';

export interface RedisMonitor {
  /** The names of the commands Redis ran since monitoring began, lower-cased, in order. */
  readonly commands: string[];
  close(): void;
}

/**
 * Watches every command a Redis server runs (MONITOR), over a plain socket. ioredis's `monitor()` marks its
 * connection as monitoring only after MONITOR's "+OK" has been handled: on a busy server the first monitored
 * line often comes in the same read, and ioredis throws it, uncaught, as a "Command queue state error".
 */
export function monitorRedis(url: string): Promise<RedisMonitor> {
  const { hostname, port } = new URL(url);
  const commands: string[] = [];
  const socket = connect(Number(port || 6379), hostname);
  return new Promise((resolve, reject) => {
    let buffered = '';
    let started = false;
    const refused = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.once('error', refused);
    // Closed before MONITOR was accepted: say so rather than leave the test to time out.
    socket.once('close', () => refused(new Error('Redis closed the connection before MONITOR began')));
    socket.on('connect', () => socket.write('MONITOR\r\n'));
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!started) {
          if (line !== '+OK') return refused(new Error(`MONITOR was refused: ${line}`));
          started = true;
          resolve({ commands, close: () => socket.destroy() });
          continue;
        }
        // +1796694852.446385 [0 127.0.0.1:33706] "set" "key" "value"
        const name = /^\+\S+ \[[^\]]*\] "([^"]*)"/.exec(line)?.[1];
        if (name) commands.push(name.toLowerCase());
      }
    });
  });
}
