/**
 * The one place the renderer reaches into `src/`: the console API's types, the pipeline's step order and the
 * health summary, from `src/protocol` only (DESIGN.md: the renderer never imports the core).
 */
export { A2A_METHOD_STEPS, A2A_STEPS, PIPELINE_STEPS } from '../../../src/protocol/console-api.js';
// "Is it working?": the same pure function as the tray's, so the two never disagree.
export { HEALTH_TITLES, healthFactsOf, healthSummary } from '../../../src/protocol/console-health.js';
export type { CheckState, Health, HealthCheck, HealthSummary } from '../../../src/protocol/console-health.js';
export type {
  A2AStep,
  CheckStep,
  A2AKeyIssueRequest,
  A2AKeyIssueResponse,
  A2AKeyLimits,
  A2AKeyRevokeResponse,
  A2AKeysResponse,
  A2AKeyView,
  AccessApproveRequest,
  AccessChangeResponse,
  AccessEvent,
  AccessPolicy,
  AccessResponse,
  AdmissionRule,
  ApiError,
  ApprovedSenderView,
  ConsoleTokenResponse,
  GatewayAgentView,
  GatewayCheckResponse,
  GatewayCondition,
  GatewayView,
  KeyView,
  KnockApproveRequest,
  KnockApproveResponse,
  KnockDenyRequest,
  KnocksResponse,
  KnockSkillOption,
  KnocksSummary,
  KnockView,
  McpResponse,
  McpStatusView,
  OutboundBudgetView,
  OutboundCredentialRequest,
  OutboundCredentialScheme,
  OutboundCredentialsResponse,
  OutboundCredentialView,
  PendingSenderView,
  ProblemView,
  RegistryRecordView,
  RegistryStatus,
  SelfTestResponse,
  SelfTestStageView,
  SettingSourceView,
  SettingsResponse,
  SettingsUpdateResponse,
  SkillAddRequest,
  SkillAgentCheck,
  SkillEditRequest,
  SkillServing,
  SkillSnippetOutcome,
  SkillSnippetRequest,
  SkillSnippetResponse,
  SkillsResponse,
  SkillView,
  StateEvent,
  StatusResponse,
  A2ATrafficDetail,
  TrafficEntry,
  TrafficFile,
  TrafficFilter,
  TrafficMinute,
  TrafficResponse,
  ToolExposureView,
  TunnelPresetView,
  TunnelStatus,
  Verdict,
} from '../../../src/protocol/console-api.js';
export type { RefusalStep } from '../../../src/protocol/errors.js';
// Skills (issue 27): the classes in order of reach, the widest each audience may have, the templates.
export { TOOL_CLASSES, WIDEST_CLASS } from '../../../src/protocol/skills.js';
export type {
  SkillAudience,
  SkillLimits,
  SkillSetting,
  ToolClass,
  ToolClassView,
} from '../../../src/protocol/skills.js';
export { SKILL_TEMPLATES } from '../../../src/protocol/skill-templates.js';
export type {
  SandboxBackend,
  SkillTemplate,
  SkillTemplateInfo,
} from '../../../src/protocol/skill-templates.js';
