import { useEffect } from 'react';
import { sectionFromHash } from '../pages/types';

/**
 * Scrolls to the section the fragment names (`#/settings/registry`: `[data-section="registry"]`) once the
 * page has drawn it (`ready`), and again on every jump. A jump the operator made (a section link) also takes
 * keyboard focus there, to the section's heading; opening a page at a section does not: focus starts at the
 * top, with the skip link and the tabs (issue 26, item 16).
 */
export function useSectionJump(ready: boolean): void {
  useEffect(() => {
    if (!ready) return;
    const jump = (focus: boolean) => {
      // Letters, digits and dashes only (sectionFromHash): safe in a selector as it is.
      const id = sectionFromHash(window.location.hash);
      if (!id) return;
      const section = document.querySelector<HTMLElement>(`[data-section="${id}"]`);
      if (!section) return;
      section.scrollIntoView({ block: 'start' });
      if (!focus) return;
      const heading = section.querySelector<HTMLElement>('h2') ?? section;
      // Focusable for this jump only, as the skip link does with <main>.
      heading.tabIndex = -1;
      heading.addEventListener('blur', () => heading.removeAttribute('tabindex'), { once: true });
      heading.focus({ preventScroll: true });
    };
    jump(false);
    const onHash = () => jump(true);
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [ready]);
}
