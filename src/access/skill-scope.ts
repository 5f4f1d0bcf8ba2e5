import { isSkillId } from '../protocol/index.js';

/**
 * A scope as the operator sent it (a key's, or an approval's): the skill ids it names, each once, or
 * undefined (none sent: every public and approved skill), or what is wrong with it. `known`: the skills
 * there are, when the caller knows them.
 */
export function skillScope(value: unknown, known: string[] | undefined): string[] | string | undefined {
  if (value === undefined || value === null) return undefined;
  const rule = `must be a list of 1 to ${MAX_SCOPE} skill ids (lower case letters, digits and dashes); leave it out for every public and approved skill`;
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_SCOPE || !value.every(isSkillId))
    return rule;
  const unknown = known ? value.filter((id) => !known.includes(id)) : [];
  if (unknown.length > 0) {
    return `names ${unknown.map((id) => `"${id}"`).join(', ')}, which ${unknown.length === 1 ? 'is not a skill' : 'are not skills'} of this agent: use ${known!.join(', ')}`;
  }
  return [...new Set(value)];
}

const MAX_SCOPE = 50;
