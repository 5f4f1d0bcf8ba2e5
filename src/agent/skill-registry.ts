import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { SkillDef } from '../protocol/index.js';
import type { Skill } from './skill.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export interface RegisteredSkill {
  skill: Skill;
  validate: ValidateFunction;
}

/** Skills registered in code; each input schema is compiled once, at registration. */
export class SkillRegistry {
  private readonly skills = new Map<string, RegisteredSkill>();
  private readonly ajv = addFormats(new Ajv({ allErrors: false, strict: false }));

  register(skill: Skill): void {
    if (this.skills.has(skill.id)) throw new Error(`Skill "${skill.id}" is registered twice`);
    this.skills.set(skill.id, { skill, validate: this.ajv.compile(skill.inputSchema) });
  }

  /** A published skill removed or paused: unknown from now on (SKILL_NOT_FOUND), gone from the card. */
  unregister(id: string): void {
    this.skills.delete(id);
  }

  get(id: string): RegisteredSkill | undefined {
    return this.skills.get(id);
  }

  /** Updates what the card and the trust check see (e.g. the operator changed trust or allowed peers). */
  update(
    id: string,
    change: Partial<Pick<SkillDef, 'trust' | 'allowedPeers' | 'description' | 'name'>>,
  ): void {
    const entry = this.skills.get(id);
    if (!entry) throw new Error(`No skill "${id}"`);
    entry.skill = { ...entry.skill, ...change };
  }

  definitions(): Skill[] {
    return [...this.skills.values()].map((entry) => entry.skill);
  }
}

/** `payload.message: must NOT have more than 4000 characters (maxLength)`: the field and the rule. */
export function describeSchemaError(error: ErrorObject | undefined): string {
  if (!error) return 'payload: does not match the skill input schema';
  const path = error.instancePath.replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~');
  if (error.keyword === 'required') {
    return `payload${path}.${String(error.params.missingProperty)}: is required`;
  }
  if (error.keyword === 'additionalProperties') {
    return `payload${path}.${String(error.params.additionalProperty)}: is not allowed (additionalProperties)`;
  }
  return `payload${path}: ${error.message ?? 'is invalid'} (${error.keyword})`;
}
