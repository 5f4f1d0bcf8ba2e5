// The docs stay true (issue 26, item 17): every command and flag the README and docs/ show exists, and every
// link between the pages (from the pages, from the console's Help links, from the code's messages) lands on
// a page and, with a #fragment, on one of its headings. Commands are read where a reader copies them from:
// shell blocks and `code spans`. A shown command that the CLI would refuse fails here, naming the page.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headingAnchors } from '../../renderer/src/help/markdown.js';
import { CALL_OPTIONS } from '../../src/cli/call-command.js';
import { KEYS_ACTIONS, KEYS_OPTIONS } from '../../src/cli/keys-command.js';
import { SERVE_OPTIONS } from '../../src/settings/flags.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The pages: the README and docs/, and the notes beside the code (renderer/, bench/: their own flags aside). */
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'renderer/README.md',
  'bench/README.md',
];
const SCRIPTS = Object.keys(
  (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts,
);

type Options = Readonly<Record<string, { type: 'string' | 'boolean'; short?: string }>>;
/** What src/cli.ts dispatches to, with the flags each command parses. */
const COMMANDS: Record<string, Options> = {
  serve: SERVE_OPTIONS as Options,
  keys: KEYS_OPTIONS,
  call: CALL_OPTIONS,
};
/** src/cli.ts answers these before any command. */
const VERSION = ['--version', '-v', 'version'];

/** A page's prose (fenced blocks blanked, line count kept) and its fenced blocks. */
function split(source: string): { prose: string; blocks: { language: string; text: string }[] } {
  const blocks: { language: string; text: string }[] = [];
  const prose = source.replace(
    /^ *(`{3,})([\w-]*)[^\n]*\n([\s\S]*?)^ *\1 *$/gm,
    (_all, _fence, language, text) => {
      blocks.push({ language: language as string, text: text as string });
      return (text as string).replace(/[^\n]/g, '');
    },
  );
  return { prose: prose.replace(/<!--[\s\S]*?-->/g, ''), blocks };
}

/** The `code spans` of prose, across line breaks as Markdown reads them. */
function codeSpans(prose: string): string[] {
  return [...prose.matchAll(/(`+)([^`][\s\S]*?)\1(?!`)/g)].map((match) =>
    match[2]!.replace(/\s*\n\s*/g, ' ').trim(),
  );
}

/** The command lines a page shows: each line of its shell blocks (continuations joined, comments cut), and each code span. */
function commandLines(source: string): string[] {
  const { prose, blocks } = split(source);
  const shell = blocks
    .filter((block) => ['sh', 'bash', 'shell', 'console', ''].includes(block.language))
    .flatMap((block) => block.text.replace(/\\\n\s*/g, ' ').split('\n'))
    .map((line) =>
      line
        .replace(/^\$ /, '')
        .replace(/\s+#.*$/, '')
        .trim(),
    );
  return [...shell, ...codeSpans(prose)].filter((line) => line !== '');
}

/** Shell-like words: quotes grouped and removed; `&&`, `||`, `;` and `|` end a command. */
function commands(line: string): string[][] {
  const out: string[][] = [[]];
  for (const match of line.matchAll(/"([^"]*)"|'([^']*)'|(&&|\|\||[;|])|([^\s"';|&]+)/g)) {
    if (match[3]) out.push([]);
    else out[out.length - 1]!.push(match[1] ?? match[2] ?? match[4]!);
  }
  return out.filter((words) => words.length > 0);
}

/** `[flags]`, `<agent>`, `...`: a placeholder the reader fills in. */
const placeholder = (word: string) => /^[[<].*[\]>]$/.test(word) || word === '...';

/** What is wrong with `agent-bridge <args>`, as src/cli.ts and each command's parser would say. */
function cliProblems(args: string[]): string[] {
  if (args.length === 0 || VERSION.includes(args[0]!)) return [];
  const [command, rest] = args[0]!.startsWith('-') ? ['serve', args] : [args[0]!, args.slice(1)];
  const options = COMMANDS[command];
  if (!options) return [`no command "${command}" (agent-bridge takes ${Object.keys(COMMANDS).join(', ')})`];
  const problems: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (placeholder(word)) continue;
    if (!word.startsWith('-') || word === '-' || word === '--') {
      positionals.push(word);
      continue;
    }
    const name = word.split('=')[0]!;
    const option = name.startsWith('--')
      ? options[name.slice(2)]
      : Object.values(options).find((candidate) => `-${candidate.short}` === name);
    // The CLI stops at the first flag it does not know (what follows it cannot be read).
    if (!option) return [...problems, `"${command}" has no flag ${name}`];
    if (option.type === 'string' && !word.includes('=')) i++;
  }
  if (command === 'keys' && positionals[0] && !(KEYS_ACTIONS as readonly string[]).includes(positionals[0]))
    problems.push(`"keys" has no command "${positionals[0]}" (it takes ${KEYS_ACTIONS.join(', ')})`);
  if (command === 'serve' && positionals.length > 0)
    problems.push(`"serve" takes only flags, not "${positionals[0]}"`);
  return problems;
}

/** Every flag of every command: a flag shown on its own (`--tunnel none`) must be one of them. */
const ANY_FLAG = new Set(
  Object.values(COMMANDS).flatMap((options) => Object.keys(options).map((name) => `--${name}`)),
);

/** The operator's pages, where a flag shown on its own is an agent-bridge flag. */
const forOperators = (page: string) => page === 'README.md' || page.startsWith('docs/');

/** What is wrong with one command a page shows (nothing for other programs' commands). */
function problemsOf(words: string[], bareFlags = true): string[] {
  const [program, ...args] = words[0] === 'sudo' ? words.slice(1) : words;
  if (program === 'npx' && args[0] === 'agent-bridge') return cliProblems(args.slice(1));
  if (program === 'agent-bridge') return cliProblems(args);
  if (program === 'node' && args[0] === 'bin/agent-bridge.js') return cliProblems(args.slice(1));
  if (program === 'npx' && args[0] === 'tsx' && args[1]?.includes('/') && !placeholder(args[1]))
    return existsSync(join(ROOT, args[1])) ? [] : [`no file ${args[1]}`];
  if (program === 'npm' && (args[0] === 'test' || args[0] === 'start'))
    return SCRIPTS.includes(args[0]) ? [] : [`package.json has no script "${args[0]}"`];
  if (program === 'npm' && args[0] === 'run') {
    const [script, ...rest] = args.slice(1).filter((word) => word !== '-s' && word !== '--silent');
    if (script === undefined) return [];
    if (!SCRIPTS.includes(script)) return [`package.json has no script "${script}"`];
    const passed = rest.indexOf('--');
    return script === 'serve' && passed !== -1 ? cliProblems(['serve', ...rest.slice(passed + 1)]) : [];
  }
  if (program?.startsWith('--') && bareFlags)
    return words
      .filter((word) => word.startsWith('--'))
      .map((word) => word.split('=')[0]!)
      .filter((flag) => !ANY_FLAG.has(flag))
      .map((flag) => `no command takes ${flag}`);
  return [];
}

/** Every problem on a page, as `page: "command": problem`. */
function commandProblems(page: string, source: string): string[] {
  return commandLines(source).flatMap((line) =>
    commands(line).flatMap((words) =>
      problemsOf(words, forOperators(page)).map((problem) => `${page}: "${line}": ${problem}`),
    ),
  );
}

/** Where a link from `page` to `target` lands: a problem, or undefined when it resolves. */
function linkProblem(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [path = '', fragment] = target.split('#');
  const file = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), decodeURIComponent(path)));
  if (!existsSync(join(ROOT, file))) return `${target}: no file ${file}`;
  if (fragment === undefined || !file.endsWith('.md')) return undefined;
  const anchors = headingAnchors(read(file));
  return anchors.includes(fragment)
    ? undefined
    : `${target}: ${file} has no heading #${fragment} (it has ${anchors.map((a) => `#${a}`).join(' ')})`;
}

/** The links and images of a page's prose. */
function links(source: string): string[] {
  const { prose } = split(source);
  const text = prose.replace(/(`+)[^`][\s\S]*?\1(?!`)/g, '');
  return [...text.matchAll(/!?\[(?:[^\][]|\[[^\]]*\])*\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

/** The source files under `dir`, as paths from the repository's root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(`${dir}/${entry.name}`)
      : /\.(ts|tsx|mjs|js)$/.test(entry.name)
        ? [`${dir}/${entry.name}`]
        : [],
  );
}

/** `docs/<page>.md` and `docs/<page>.md#heading` as the code names them (Help links, "see" in messages). */
function codeReferences(): { file: string; target: string }[] {
  return ['src', 'electron', 'renderer/src', 'scripts', 'bin'].flatMap(sourceFiles).flatMap((file) =>
    [...read(file).matchAll(/\bdocs\/[\w-]+\.md(?:#[\w-]+)?/g)].map((match) => ({
      file,
      target: match[0],
    })),
  );
}

describe('the commands the docs show', () => {
  it.each(PAGES)('%s: every npm script, agent-bridge command and flag exists', (page) => {
    expect(commandProblems(page, read(page))).toEqual([]);
  });

  it('finds what it checks: the Try it commands, serve, keys and call flags, npm scripts', () => {
    const shown = PAGES.flatMap((page) => commandLines(read(page)));
    for (const line of [
      'npm run serve -- --demo',
      'npx agent-bridge call --demo agent://127.0.0.1:8787 "Hello"',
      'npx agent-bridge keys list',
      'npm run serve -- --help',
      'npm test',
    ])
      expect(shown).toContain(line);
  });

  it('fails on a flag, a command or a script that does not exist', () => {
    const page = [
      '```sh',
      'npm run serve -- --demo --tunel none',
      '```',
      'Then `npx agent-bridge keys rotate`.',
    ];
    page.push(
      'Or `agent-bridge call --stream --a2a --retries 3 agent://x "Hi"`, `--no-such-flag`, `npm run deploy`.',
    );
    expect(commandProblems('docs/example.md', page.join('\n'))).toEqual([
      'docs/example.md: "npm run serve -- --demo --tunel none": "serve" has no flag --tunel',
      'docs/example.md: "npx agent-bridge keys rotate": "keys" has no command "rotate" (it takes list, issue, revoke)',
      'docs/example.md: "agent-bridge call --stream --a2a --retries 3 agent://x "Hi"": "call" has no flag --retries',
      'docs/example.md: "--no-such-flag": no command takes --no-such-flag',
      'docs/example.md: "npm run deploy": package.json has no script "deploy"',
    ]);
  });

  it('reads a flag that takes a value as the CLI does: its value is not a command', () => {
    expect(problemsOf(['npx', 'agent-bridge', 'keys', '--data-dir', 'revoke', 'list'])).toEqual([]);
    expect(problemsOf(['npx', 'agent-bridge', '--port=9797', '--register'])).toEqual([]);
    expect(problemsOf(['npx', 'agent-bridge', 'serve', 'now'])).toEqual([
      '"serve" takes only flags, not "now"',
    ]);
  });
});

describe('the environment variables the docs name', () => {
  it('every AGENT_BRIDGE_* variable is one the code reads', () => {
    const named = new Set(
      PAGES.flatMap((page) => [...read(page).matchAll(/\bAGENT_BRIDGE_[A-Z0-9_]+/g)].map((m) => m[0])),
    );
    const code = ['src', 'electron', 'scripts', 'test/e2e'].flatMap(sourceFiles).map(read).join('\n');
    expect(named.size).toBeGreaterThan(2);
    expect([...named].filter((name) => !new RegExp(`\\b${name}\\b`).test(code))).toEqual([]);
  });
});

describe('the links between the docs', () => {
  it.each(PAGES)('%s: every link lands on a file, and a #fragment on a heading of that page', (page) => {
    expect(links(read(page)).flatMap((target) => linkProblem(page, target) ?? [])).toEqual([]);
  });

  it('every page of docs/ is linked from the README', () => {
    const linked = links(read('README.md')).map((target) => target.split('#')[0]);
    const pages = PAGES.filter((page) => page.startsWith('docs/'));
    expect(pages.filter((page) => !linked.includes(page))).toEqual([]);
  });

  it("the code's references (the console's Help links, messages that say see docs/...) land too", () => {
    const references = codeReferences();
    expect(references.length).toBeGreaterThan(10);
    expect(
      references.flatMap(
        ({ file, target }) => linkProblem('README.md', target)?.replace(/^/, `${file}: `) ?? [],
      ),
    ).toEqual([]);
  });

  it('fails on a page, or a heading, that does not exist', () => {
    expect(linkProblem('docs/a2a.md', 'tunnels.md#an-address-that-never-changes')).toBeUndefined();
    expect(linkProblem('docs/a2a.md', 'tunnel.md')).toBe('tunnel.md: no file docs/tunnel.md');
    expect(linkProblem('README.md', 'docs/tunnels.md#stable-addresses')).toMatch(
      /^docs\/tunnels\.md#stable-addresses: docs\/tunnels\.md has no heading #stable-addresses \(it has #public-address-tunnels /,
    );
    expect(linkProblem('docs/settings.md', '#no-such-section')).toMatch(/has no heading #no-such-section/);
  });
});
