// The config proposed for a new skill's agent where the console API test cannot easily put it: a gateway on
// another machine (its file is not this one) and a gateway that could not be asked for its agents.
import { describe, expect, it } from 'vitest';
import { STOCK_ROSTER } from '../../src/bridge/agent-snippet.js';
import { skillAgentSnippet } from '../../src/bridge/skill-snippet.js';
import type { SkillTarget } from '../../src/bridge/skill-targets.js';
import { proposeSkillConfig, type SkillProposalDeps } from '../../src/skills/skill-proposal.js';

const web = (detail = 'Agent research is offered web search and fetch only.'): SkillTarget['tools'] => ({
  class: 'web',
  tools: ['web_fetch', 'web_search'],
  detail,
});

function deps(over: Partial<SkillProposalDeps>, target: SkillTarget): SkillProposalDeps {
  return {
    readConfig: () => ({ ok: true, path: '/home/op/.openclaw/openclaw.json', config: {} }),
    configPath: '/home/op/.openclaw/openclaw.json',
    checkNow: async () => target,
    chatAgent: 'public',
    skills: [],
    ...over,
  };
}

describe('proposeSkillConfig', () => {
  it('a gateway on another machine: a stock roster, merged there, and the class cannot be read here', async () => {
    const detail =
      'The gateway runs on another machine, so the tools of agent "research" cannot be read from here: check them there.';
    const answer = await proposeSkillConfig(
      { template: 'research', agent: 'research' },
      deps(
        { readConfig: () => ({ remote: true }) },
        {
          agent: { agent: 'research', model: 'openclaw/research', check: 'present' },
          tools: { class: 'host', tools: [], detail },
        },
      ),
    );
    expect(answer).toMatchObject({
      snippet: skillAgentSnippet('research', 'research', STOCK_ROSTER),
      mergeInto: '~/.openclaw/openclaw.json',
      roster: 'stock',
      outcome: { state: 'unknown', message: detail },
    });
    expect(answer.rosterNote).toContain("Merge it into that machine's openclaw.json");
  });

  it('the gateway could not be asked for its agents: the class from the file, said to be unconfirmed', async () => {
    const answer = await proposeSkillConfig(
      { template: 'research', agent: 'research' },
      deps(
        {
          readConfig: () => ({
            ok: true,
            path: '/x/openclaw.json',
            config: { agents: { ownership: 'explicit', entries: { main: {}, research: {} } } },
          }),
        },
        {
          agent: {
            agent: 'research',
            model: 'openclaw/research',
            check: 'unknown',
            detail: 'the gateway is unreachable',
          },
          tools: web(),
        },
      ),
    );
    expect(answer.outcome).toEqual({
      state: 'as-intended',
      message:
        'Agent "research" is web, as the template intends: web_fetch, web_search. (The gateway could not be asked whether it runs it: the gateway is unreachable.)',
    });
  });
});
