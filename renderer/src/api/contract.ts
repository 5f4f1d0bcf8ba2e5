/**
 * The one place the renderer reaches into `src/`: the console API's types and the pipeline's step order,
 * from `src/protocol` only (DESIGN.md: the renderer never imports the core).
 */
export { PIPELINE_STEPS } from '../../../src/protocol/console-api.js';
export type {
  AccessChangeResponse,
  AccessEvent,
  AccessPolicy,
  AccessResponse,
  AdmissionRule,
  ApiError,
  ApprovedSenderView,
  GatewayAgentView,
  GatewayView,
  KeyView,
  McpResponse,
  McpStatusView,
  PendingSenderView,
  ProblemView,
  RegistryRecordView,
  RegistryStatus,
  SelfTestResponse,
  SelfTestStageView,
  SettingsResponse,
  SettingsUpdateResponse,
  StateEvent,
  StatusResponse,
  TrafficEntry,
  TrafficFilter,
  TrafficMinute,
  TrafficResponse,
  ToolExposureView,
  TunnelPresetView,
  TunnelStatus,
  Verdict,
} from '../../../src/protocol/console-api.js';
export type { RefusalStep } from '../../../src/protocol/errors.js';
