import { sectionHref, type PageId } from '../pages/types';

export interface NavSection {
  id: string;
  title: string;
  /** A count beside the title (senders waiting). */
  count?: number;
}

/**
 * A page's sections as links (`#/settings/registry`): a long page is one jump from any part of it. After the
 * page tabs in the tab order, before the page's own content.
 */
export function SectionNav({
  page,
  label,
  sections,
}: {
  page: PageId;
  label: string;
  sections: NavSection[];
}) {
  return (
    <nav className="section-nav" aria-label={label}>
      <ul>
        {sections.map((section) => (
          <li key={section.id}>
            <a href={sectionHref(page, section.id)} data-testid={`jump-${section.id}`}>
              {section.title}
              {section.count ? <span className="tab-count"> ({section.count})</span> : null}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
