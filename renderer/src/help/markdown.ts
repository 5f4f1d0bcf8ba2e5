/**
 * The Markdown of README.md and docs/*.md, read into blocks the Help page draws as React elements (never as
 * HTML: nothing in a page can run or load anything). Only what the docs use: headings, paragraphs, lists,
 * fenced code, tables, and inline code, links, images, strong and emphasis. HTML comments are notes for
 * the docs' writers and are skipped. Pure: the docs' own test (test/unit/docs-commands.test.ts) reads the
 * headings' anchors with it, so a `#fragment` that resolves there resolves in the console too.
 */

export type Inline =
  | { kind: 'text'; text: string }
  | { kind: 'code'; text: string }
  | { kind: 'strong' | 'em'; children: Inline[] }
  | { kind: 'link'; href: string; children: Inline[] }
  | { kind: 'image'; alt: string; src: string };

export type Block =
  | { kind: 'heading'; level: number; anchor: string; children: Inline[] }
  | { kind: 'paragraph'; children: Inline[] }
  | { kind: 'code'; language: string; text: string }
  | { kind: 'list'; ordered: boolean; start: number; items: Block[][] }
  | { kind: 'table'; head: Inline[][]; rows: Inline[][][] };

/**
 * A heading's anchor as GitHub makes it (github-slugger): the heading's text in lower case, without
 * punctuation, each space a hyphen; a repeated one gets `-1`, `-2`... Call one per page.
 */
export function anchorMaker(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  };
}

/** The anchors of a page's headings, in order. */
export function headingAnchors(source: string): string[] {
  const anchors: string[] = [];
  const visit = (blocks: Block[]) => {
    for (const block of blocks) {
      if (block.kind === 'heading') anchors.push(block.anchor);
      if (block.kind === 'list') block.items.forEach(visit);
    }
  };
  visit(parseMarkdown(source));
  return anchors;
}

/** A page's text as it reads, markup removed: a heading's title, a link's words. */
export function plainText(inlines: Inline[]): string {
  return inlines
    .map((inline) => {
      if (inline.kind === 'text' || inline.kind === 'code') return inline.text;
      if (inline.kind === 'image') return inline.alt;
      return plainText(inline.children);
    })
    .join('');
}

export function parseMarkdown(source: string): Block[] {
  return parseBlocks(source.replace(/\r\n?/g, '\n').split('\n'), anchorMaker());
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])( +|$)/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function startsBlock(line: string, next: string | undefined): boolean {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    LIST_ITEM.test(line) ||
    line.trimStart().startsWith('<!--') ||
    (line.trimStart().startsWith('|') && next !== undefined && TABLE_RULE.test(next))
  );
}

function parseBlocks(lines: string[], anchor: (text: string) => string): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    if (line.trimStart().startsWith('<!--')) {
      while (i < lines.length && !lines[i]!.includes('-->')) i++;
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const indent = line.length - line.trimStart().length;
      const body: string[] = [];
      i++;
      while (
        i < lines.length &&
        !new RegExp(`^ {0,3}${fence[1]![0]}{${fence[1]!.length},}\\s*$`).test(lines[i]!)
      ) {
        body.push(lines[i]!.slice(Math.min(indent, lines[i]!.length - lines[i]!.trimStart().length)));
        i++;
      }
      i++;
      blocks.push({ kind: 'code', language: fence[2] ?? '', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const children = parseInline(heading[2]!);
      blocks.push({
        kind: 'heading',
        level: heading[1]!.length,
        anchor: anchor(plainText(children)),
        children,
      });
      i++;
      continue;
    }
    if (line.trimStart().startsWith('|') && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]!)) {
      const head = cells(line).map(parseInline);
      const rows: Inline[][][] = [];
      i += 2;
      while (i < lines.length && lines[i]!.trimStart().startsWith('|')) {
        rows.push(cells(lines[i]!).map(parseInline));
        i++;
      }
      blocks.push({ kind: 'table', head, rows });
      continue;
    }
    if (LIST_ITEM.test(line)) {
      i = parseList(lines, i, blocks, anchor);
      continue;
    }
    const text: string[] = [line.trim()];
    i++;
    while (i < lines.length && lines[i]!.trim() !== '' && !startsBlock(lines[i]!, lines[i + 1])) {
      text.push(lines[i]!.trim());
      i++;
    }
    blocks.push({ kind: 'paragraph', children: parseInline(text.join('\n')) });
  }
  return blocks;
}

/** One list from `start`: its items, each item's lines read as blocks of their own. Returns the next line. */
function parseList(
  lines: string[],
  start: number,
  blocks: Block[],
  anchor: (text: string) => string,
): number {
  const first = LIST_ITEM.exec(lines[start]!)!;
  const indent = first[1]!.length;
  const ordered = /\d/.test(first[2]!);
  const items: string[][] = [];
  let i = start;
  let content = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const marker = LIST_ITEM.exec(line);
    if (marker && marker[1]!.length === indent && /\d/.test(marker[2]!) === ordered) {
      content = marker[0].length;
      items.push([line.slice(content)]);
      i++;
      continue;
    }
    const item = items[items.length - 1]!;
    if (line.trim() === '') {
      // A blank line ends the list unless the next line goes on inside the item.
      const next = lines.slice(i + 1).find((candidate) => candidate.trim() !== '');
      if (next === undefined || indentOf(next) < content) break;
      item.push('');
      i++;
      continue;
    }
    if (indentOf(line) >= content) item.push(line.slice(content));
    else if (!startsBlock(line, lines[i + 1]) && item[item.length - 1] !== '') item.push(line.trim());
    else break;
    i++;
  }
  const start1 = ordered ? Number(/\d+/.exec(first[2]!)![0]) : 1;
  blocks.push({
    kind: 'list',
    ordered,
    start: start1,
    items: items.map((item) => parseBlocks(item, anchor)),
  });
  return i;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** A table row's cells: split at each `|` that is not escaped (`\|`). */
function cells(row: string): string[] {
  const inner = row
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return inner.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let plain = '';
  const flush = () => {
    if (plain) out.push({ kind: 'text', text: plain });
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length && /[\\`*_{}[\]()#+\-.!|<>~]/.test(text[i + 1]!)) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (char === '`') {
      const run = /^`+/.exec(rest)![0];
      const close = text.indexOf(run, i + run.length);
      if (close !== -1) {
        flush();
        let code = text.slice(i + run.length, close).replace(/\n/g, ' ');
        if (code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') code = code.slice(1, -1);
        out.push({ kind: 'code', text: code });
        i = close + run.length;
        continue;
      }
      plain += run;
      i += run.length;
      continue;
    }
    const link = /^(!?)\[/.exec(rest) ? linkAt(text, i) : undefined;
    if (link) {
      flush();
      out.push(
        link.image
          ? { kind: 'image', alt: link.label, src: link.href }
          : { kind: 'link', href: link.href, children: parseInline(link.label) },
      );
      i = link.end;
      continue;
    }
    const strong = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest);
    if (strong) {
      flush();
      out.push({ kind: 'strong', children: parseInline(strong[2]!) });
      i += strong[0].length;
      continue;
    }
    // Emphasis opens at a word's start and closes at a word's end (snake_case stays as it is).
    const before = i === 0 ? ' ' : text[i - 1]!;
    const em = /^([*_])(?=\S)([\s\S]*?\S)\1(?![\p{L}\p{N}])/u.exec(rest);
    if (em && !/[\p{L}\p{N}]/u.test(before)) {
      flush();
      out.push({ kind: 'em', children: parseInline(em[2]!) });
      i += em[0].length;
      continue;
    }
    plain += char;
    i++;
  }
  flush();
  return out;
}

/** `[label](href)` or `![alt](src)` starting at `at`, brackets balanced; undefined when it is not one. */
function linkAt(
  text: string,
  at: number,
): { image: boolean; label: string; href: string; end: number } | undefined {
  const image = text[at] === '!';
  let i = at + (image ? 2 : 1);
  let depth = 1;
  for (; i < text.length && depth > 0; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '[') depth++;
    else if (text[i] === ']') depth--;
  }
  if (depth !== 0 || text[i] !== '(') return undefined;
  const close = text.indexOf(')', i);
  if (close === -1) return undefined;
  const href = text.slice(i + 1, close).trim();
  if (href === '' || /\s/.test(href)) return undefined;
  return { image, label: text.slice(at + (image ? 2 : 1), i - 1), href, end: close + 1 };
}
