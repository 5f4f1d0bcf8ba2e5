import { expect } from 'vitest';

export interface Inspected {
  /** The bridge's own text: everything outside the blocks. */
  outside: string;
  blocks: { what: string; content: string }[];
}

/**
 * Splits a tool result into the bridge's own text and the untrusted blocks (one content line each, between
 * markers with a 16-hex id), checking each block closes right after its one line.
 */
export function inspect(text: string): Inspected {
  const lines = text.split('\n');
  const outside: string[] = [];
  const blocks: Inspected['blocks'] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^<<<untrusted ([0-9a-f]{16}) from [^\s>]+>>>$/.exec(lines[i] as string);
    if (!open) {
      outside.push(lines[i] as string);
      continue;
    }
    const id = open[1] as string;
    expect(lines[i + 2], 'the block ends on the line after its one content line').toBe(
      `<<<end untrusted ${id}>>>`,
    );
    const what = new RegExp(`between the markers ${id}, is (.+?) written by another agent`).exec(text)?.[1];
    blocks.push({ what: what ?? '', content: lines[i + 1] as string });
    i += 2;
  }
  return { outside: outside.join('\n'), blocks };
}

/** The JSON in the block that holds `what`. */
export function blockValue(text: string, what: string): unknown {
  const block = inspect(text).blocks.find((candidate) => candidate.what === what);
  if (!block) throw new Error(`no block with ${what} in:\n${text}`);
  return JSON.parse(block.content) as unknown;
}
