// 1r. The signed chat path with shared state on Redis (as replicas run): a second agent process whose nonces,
// limits and budget live on a real redis-server on loopback, measured at c=32 like 1.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startRedisServer } from '../test/fixtures/redis-server.js';
import { measureSignedChat, type Measured, type PhaseOptions } from './measure.js';
import { checkSignedChat, startAgentChild, type BenchEnv } from './setup.js';

export type RedisResult = { c32: Measured; redisCpuUsPerCall: number };
export interface RedisFailure {
  error: string;
}

export async function measureWithRedis(
  env: BenchEnv,
  phase: PhaseOptions,
  cpuProfileDir?: string,
): Promise<RedisResult | RedisFailure> {
  try {
    execFileSync('redis-server', ['--version']);
  } catch {
    return { error: 'redis-server is not installed (apt-get install redis-server)' };
  }
  const redis = await startRedisServer();
  try {
    const agent = await startAgentChild(env.gateway, {
      cpu: env.pin?.server,
      cpuProfileDir,
      approved: [env.peer.id],
      redisUrl: redis.url,
    });
    try {
      await checkSignedChat(agent.url, env.caller, agent.id);
      // A fresh process: warm it up as the first agent is (JIT, the first Redis script load).
      await measureSignedChat({ ...env, agent }, { ...phase, warmupMs: phase.warmupMs * 2, durationMs: 500 });
      const before = redisCpuUs(redis.pid);
      const c32 = await measureSignedChat({ ...env, agent }, phase);
      // Redis's own CPU over warm-up and run alike: an upper bound per call.
      const calls = c32.ok * (1 + phase.warmupMs / phase.durationMs);
      return { c32, redisCpuUsPerCall: (redisCpuUs(redis.pid) - before) / calls };
    } finally {
      await agent.stop();
    }
  } finally {
    await redis.close();
  }
}

// utime + stime of a process, from /proc (clock ticks of 10 ms on Linux).
function redisCpuUs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return NaN;
  }
}
