// What names a skill, where the cards, the envelopes, the A2A paths, the keys' scopes and the settings meet.

/** The built-in skill: `chat` on the restricted agent (`gatewayAgent`), at `/a2a/jsonrpc` and `/a2a/rest`. */
export const DEFAULT_SKILL = 'chat';

/** A skill id: lower case letters, digits and dashes, starting with a letter or digit, at most 40. */
export const SKILL_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,39}$';
const SKILL_ID = new RegExp(SKILL_ID_PATTERN);

/** The most skills an operator publishes beside `chat` (each is a card, a path and an agent to check). */
export const MAX_SKILLS = 32;

export function isSkillId(value: unknown): value is string {
  return typeof value === 'string' && SKILL_ID.test(value);
}
