// What a smoke test (or another script) can call: the environment, each measurement, and the report.
export { runLoad, keepAliveAgent, send, sendAndRead, type LoadResult, type PreparedRequest } from './load.js';
export { startInstantGateway, type InstantGateway } from './instant-gateway.js';
export { startEchoServer, type EchoServer } from './echo-server.js';
export { startBenchAgent, BENCH_SETTINGS } from './bench-agent.js';
export { spawnServer, type ServerChild } from './child-host.js';
export { setupBench, startAgentChild, checkSignedChat, type BenchEnv } from './setup.js';
export { signedChat, directGatewayChat, type Caller } from './requests.js';
export {
  measure,
  measureSignedChat,
  measureEcho,
  measureDirectGateway,
  measureSigningCost,
  type Measured,
  type PhaseOptions,
} from './measure.js';
export { measureStream, type StreamOptions, type StreamResult } from './measure-stream.js';
export { measureMemory, type MemoryOptions, type MemoryResult } from './measure-memory.js';
export {
  measureTunnel,
  TUNNEL_MAX_CONN,
  type TunnelOptions,
  type TunnelResult,
  type TunnelFailure,
  type TunnelPoint,
  type RestartTrial,
} from './measure-tunnel.js';
export {
  measureConsoleLoad,
  type ConsoleLoadOptions,
  type ConsoleLoadResult,
  type ConsoleLoadFailure,
  type ConsoleArm,
  type ConsolePoint,
  type Delivery,
} from './measure-console.js';
export {
  measureUi,
  frameStats,
  CHROMIUM,
  LONG_FRAME_MS,
  type UiOptions,
  type UiResult,
  type UiOutcome,
  type FrameStats,
} from './measure-ui.js';
export { runSuite, FULL, QUICK, type BenchConfig, type BenchResults } from './suite.js';
export { buildRows, formatReport, missedTargets, TARGETS } from './report.js';
export { summarize, percentile } from './stats.js';
