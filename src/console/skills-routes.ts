import type { Router } from '@koa/router';
import type { AgentBridgeApp } from '../app.js';
import type { SkillSnippetResponse, SkillsResponse } from '../protocol/console-api.js';
import { acceptSkill, addSkill, editSkill, removeSkill, type TargetNow } from '../skills/skill-edits.js';
import { proposeSkillConfig } from '../skills/skill-proposal.js';
import type { ApiDeps } from './api-deps.js';
import { readJson } from './body.js';
import { reply } from './reply.js';

/**
 * The Skills page (issue 27, item 5): GET /api/skills; POST /api/skills (add); PUT /api/skills/:id (edit,
 * pause); DELETE /api/skills/:id; POST /api/skills/:id/accept (a host skill's tools, exactly as shown);
 * POST /api/skills/snippet (a new skill's agent config from a template, and that agent as it is now).
 * Each change is judged whole against the skill's agent as it is now (skills/skill-edits.ts), then saved in
 * the `skills` setting and applied at once; a refusal (SkillEditError) is answered by error-reply.ts.
 */
export function skillsRoutes(router: Router, deps: ApiDeps): void {
  const { app } = deps;
  const skills = () => app.currentSettings.skills;
  const targetNow: TargetNow = (skill) => app.published.targetNow(skill);
  const save = (next: AgentBridgeApp['currentSettings']['skills']): SkillsResponse => {
    deps.settings.saveSkills(next);
    return app.published.response();
  };

  router.get(
    '/api/skills',
    reply((): SkillsResponse => app.published.response()),
  );
  router.post(
    '/api/skills',
    reply(async (ctx): Promise<SkillsResponse> => {
      const answer = save(addSkill(skills(), await readJson(ctx), targetNow));
      ctx.status = 201;
      return answer;
    }),
  );
  router.post(
    '/api/skills/snippet',
    reply(async (ctx): Promise<SkillSnippetResponse> => {
      const targets = app.gateway.skillTargets;
      return proposeSkillConfig(await readJson(ctx), {
        readConfig: () => targets.readConfig(),
        configPath: app.gateway.openclawConfig().path,
        checkNow: (skill) => targets.checkNow(skill),
        chatAgent: app.currentSettings.gatewayAgent,
        skills: skills(),
      });
    }),
  );
  router.put(
    '/api/skills/:id',
    reply(async (ctx) => save(editSkill(skills(), ctx.params.id ?? '', await readJson(ctx), targetNow))),
  );
  router.delete(
    '/api/skills/:id',
    reply((ctx) => save(removeSkill(skills(), ctx.params.id ?? ''))),
  );
  router.post(
    '/api/skills/:id/accept',
    reply(async (ctx) =>
      save(acceptSkill(skills(), ctx.params.id ?? '', await readJson(ctx), targetNow, Date.now())),
    ),
  );
}
