/**
 * The Overview's Skills card: how many skills are published (chat included), how many of them are public
 * (anyone the access policy admits calls those), and how many do not serve now, with the way to the Skills
 * page that says why.
 */
import type { StatusResponse } from '../api/contract';
import { formatCount } from '../lib/format';
import { pageHref } from '../pages/types';
import { Card } from './Card';

export function SkillsSummaryCard({ skills }: { skills: StatusResponse['skills'] }) {
  const { published, notServing } = skills;
  return (
    <Card
      title="Skills"
      testId="skills-summary"
      help={{ to: 'docs/console.md#skills', topic: 'skills' }}
      aside={
        <a className="button small ghost" href={pageHref('skills')}>
          Open Skills
        </a>
      }
    >
      <div className="stats">
        <div className="stat">
          <span className="stat-value" data-testid="skills-published">
            {formatCount(published)}
          </span>
          <span className="stat-label">published</span>
        </div>
        <div className="stat">
          <span className="stat-value" data-testid="skills-public">
            {formatCount(skills.public)}
          </span>
          <span className="stat-label">public</span>
        </div>
        <div className="stat">
          <span className={`stat-value ${notServing > 0 ? 'bad' : ''}`} data-testid="skills-not-serving">
            {formatCount(notServing)}
          </span>
          <span className="stat-label">not serving</span>
        </div>
      </div>
      <p className="muted small" data-testid="skills-summary-text">
        {skills.public === 0
          ? 'No skill is public: only callers you approved or gave a key reach any.'
          : `${skills.public === 1 ? 'One skill is' : `${formatCount(skills.public)} skills are`} public: anyone your access policy admits may call ${skills.public === 1 ? 'it' : 'them'}, with no tools or web tools only.`}
        {notServing > 0
          ? ` ${notServing === 1 ? 'One skill refuses its callers' : `${formatCount(notServing)} skills refuse their callers`} now: the Skills page says why.`
          : ''}
      </p>
    </Card>
  );
}
