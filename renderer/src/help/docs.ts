/// <reference types="vite/client" />
/**
 * The console's help pages: README.md and docs/*.md, bundled into the UI's build (each page its own chunk,
 * loaded when it is opened). The console answers its own questions with no internet (a server's console is
 * reached over `ssh -L`, the desktop app may be offline) and no repository address to link to (package.json
 * names none), and a page is always the one written for this version. Nothing new is served: the pages
 * come with the UI's own files.
 *
 * Code names a page as the docs do, `docs/<page>.md#<heading>` (test/unit/docs-commands.test.ts checks
 * every such reference); the console shows it at `#/help/<page>/<heading>`.
 */

const LOADERS: Record<string, () => Promise<string>> = {
  ...import.meta.glob<string>('../../../README.md', { query: '?raw', import: 'default' }),
  ...import.meta.glob<string>('../../../docs/*.md', { query: '?raw', import: 'default' }),
};

/** The README: what Agent Bridge is, and every other page (its "Read more"). */
export const HELP_HOME = 'readme';

/** A page's id (`tunnels`) -> its path in the repository (`docs/tunnels.md`). */
const PAGES = new Map(
  Object.keys(LOADERS).map((key) => {
    const path = key.replace(/^(\.\.\/)+/, '');
    return [path === 'README.md' ? HELP_HOME : path.replace(/^docs\/|\.md$/g, ''), path] as const;
  }),
);

/** How code names a help page, `docs/tunnels.md`, or a heading of it, `docs/registry.md#what-registering-does` */
export type HelpReference = `docs/${string}.md` | `docs/${string}.md#${string}`;

export interface HelpPlace {
  page: string;
  /** A heading's anchor, as GitHub makes it. */
  section?: string;
}

export function helpPageExists(page: string): boolean {
  return PAGES.has(page);
}

export function helpPagePath(page: string): string | undefined {
  return PAGES.get(page);
}

/** The page's Markdown, or undefined when there is no such page. */
export function loadHelpPage(page: string): Promise<string> | undefined {
  const path = PAGES.get(page);
  return path === undefined ? undefined : LOADERS[`../../../${path}`]?.();
}

/** `#/help/tunnels/an-address-that-never-changes`: the fragment route of a help page (and heading). */
export function helpPlaceHref({ page, section }: HelpPlace): string {
  return `#/help/${encodeURIComponent(page)}${section ? `/${encodeURIComponent(section)}` : ''}`;
}

/** `docs/tunnels.md#an-address-that-never-changes` -> `#/help/tunnels/an-address-that-never-changes` */
export function helpHref(reference: HelpReference): string {
  const [path = '', section] = reference.split('#');
  return helpPlaceHref({ page: path.replace(/^docs\/|\.md$/g, ''), section });
}

/** The help page a fragment names (`#/help`, `#/help/tunnels`, `#/help/tunnels/heading`), if it names one. */
export function helpFromHash(hash: string): HelpPlace | undefined {
  const match = /^#\/help(?:\/([^/]+)(?:\/([^/]+))?)?\/?$/.exec(hash);
  if (!match) return undefined;
  try {
    const page = match[1] ? decodeURIComponent(match[1]) : HELP_HOME;
    return match[2] ? { page, section: decodeURIComponent(match[2]) } : { page };
  } catch {
    return { page: HELP_HOME };
  }
}

export type ResolvedLink =
  | { kind: 'external'; href: string }
  | { kind: 'help'; href: string }
  /** A file the console does not serve (source, an image): its words are shown without a link. */
  | { kind: 'none' };

/** Where a link in the page at `from` (`docs/a2a.md`) goes in the console. */
export function resolveHelpLink(href: string, from: string): ResolvedLink {
  if (/^https?:\/\//i.test(href) || /^mailto:/i.test(href)) return { kind: 'external', href };
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return { kind: 'none' };
  const [path = '', section] = href.split('#');
  const target = path === '' ? from : joinPath(from, path);
  const page = [...PAGES].find(([, candidate]) => candidate === target)?.[0];
  return page === undefined ? { kind: 'none' } : { kind: 'help', href: helpPlaceHref({ page, section }) };
}

/** `docs/a2a.md` + `../README.md` -> `README.md` */
function joinPath(from: string, relative: string): string {
  const parts = from.split('/').slice(0, -1);
  for (const part of relative.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}
