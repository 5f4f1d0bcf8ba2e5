import type { ApiClient } from '../api/client';
import type { ConsoleData } from '../hooks/useConsole';

export const PAGES = [
  { id: 'overview', label: 'Overview' },
  { id: 'traffic', label: 'Traffic' },
  { id: 'skills', label: 'Skills' },
  { id: 'access', label: 'Access' },
  { id: 'keys', label: 'Keys' },
  { id: 'registry', label: 'Registry' },
  { id: 'settings', label: 'Settings' },
] as const;

export type PageId = (typeof PAGES)[number]['id'];

/** Pages live in the fragment: `#/traffic`. (`#token=...` is taken and erased before routing.) */
export function pageFromHash(hash: string): PageId {
  const id = /^#\/([a-z]+)/.exec(hash)?.[1];
  return PAGES.find((page) => page.id === id)?.id ?? 'overview';
}

export function pageHref(id: PageId): string {
  return `#/${id}`;
}

/** A section of a page: `#/settings/registry` opens Settings there (the page scrolls to it). */
export function sectionHref(id: PageId, section: string): string {
  return `#/${id}/${section}`;
}

/** The section the fragment names, if any: `#/settings/registry` -> "registry". */
export function sectionFromHash(hash: string): string | undefined {
  return /^#\/[a-z]+\/([a-z0-9-]+)/.exec(hash)?.[1];
}

export interface PageProps {
  api: ApiClient;
  data: ConsoleData;
  /** Takes a new console token into this tab (Settings: New console token). */
  replaceToken?: (token: string) => void;
  /** This tab replaced the console token. */
  tokenReplaced?: boolean;
}
