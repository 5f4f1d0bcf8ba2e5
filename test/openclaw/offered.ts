/**
 * What the real gateway offered the stand-in model in one request: the tools it sent directly and the ones
 * its system prompt lists behind Tool Search (reachable through `tool_call`), and which of them reach the
 * operator's machine. Shared by the test:openclaw files.
 */
import { HOST_TOOLS } from './gateway.js';
import { messagesText, toolNames, type ModelRequest } from './model-server.js';

/**
 * Tools that reach the operator's machine or its devices: GATEWAY.md's list, plus what this OpenClaw
 * release calls some of them or offers beside them (`automations` is cron's new name; `ls`, `openclaw`,
 * `code_execution`, the file-transfer and terminal tools reach files, shells or paired nodes).
 */
export const HOST_REACHING = new Set<string>([
  ...HOST_TOOLS,
  'automations',
  'ls',
  'openclaw',
  'code_execution',
  'computer',
  'terminal',
  'portal',
  'plugins',
  'secrets',
  'mobile_ui',
  'file_fetch',
  'file_write',
  'dir_list',
  'dir_fetch',
]);

/**
 * The tools the system prompt lists as reachable through OpenClaw's tool_search/tool_call meta tools
 * (their schemas are "deferred"): lines `- name (owner): …` under that heading.
 */
export function deferredTools(system: string): string[] {
  const match = /deferred-schema tools:\n((?:- .*\n?)+)/.exec(system);
  if (!match?.[1]) return [];
  return [...match[1].matchAll(/^- ([A-Za-z0-9_.:-]+) \(/gm)].map((m) => m[1] ?? '');
}

/** Everything one model request was offered, directly or behind Tool Search. */
export function offered(request: ModelRequest): {
  direct: string[];
  deferred: string[];
  reachable: string[];
} {
  const direct = toolNames(request.body);
  const deferred = deferredTools(messagesText(request.body, 'system'));
  return { direct, deferred, reachable: [...direct, ...deferred] };
}
