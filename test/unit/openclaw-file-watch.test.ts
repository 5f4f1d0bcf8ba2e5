// When OpenClaw's config file changes, as the bridge learns it (openclaw-file-watch.ts): a write seen by a watch
// of the file's folder, or, where there is none to be had, by a stat at each look. Real files in a temp folder.
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { OpenClawFileWatch, STAT_EVERY_MS } from '../../src/bridge/openclaw-file-watch.js';
import { tempDir } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

const root = tempDir('openclaw-file-watch-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

let made: OpenClawFileWatch[] = [];
afterEach(() => {
  for (const watch of made) watch.close();
  made = [];
});

let folders = 0;
function setup(options: { folder?: boolean } = {}) {
  const folder = join(root, `f${(folders += 1)}`, '.openclaw');
  const path = join(folder, 'openclaw.json');
  if (options.folder !== false) {
    mkdirSync(folder, { recursive: true });
    writeFileSync(path, '{}');
  }
  let edits = 0;
  // A clock the test moves: a look without a watch stats the file at most once per STAT_EVERY_MS.
  const clock = { ms: 0 };
  const watch = new OpenClawFileWatch({
    path,
    onEdit: () => (edits += 1),
    now: () => (clock.ms += STAT_EVERY_MS),
  });
  made.push(watch);
  return { folder, path, watch, edits: () => edits };
}

describe("OpenClaw's config file, watched", () => {
  it('changes version at each write, in place or by a rename, and says so once a burst', async () => {
    const { path, watch, edits } = setup();
    const first = watch.version();
    expect(watch.version()).toBe(first);

    writeFileSync(path, '{ tools: { profile: "full" } }');
    await until(() => watch.version() !== first, 2000, 'the write seen');
    await until(() => edits() === 1, 2000, 'the edit told');
    const second = watch.version();

    writeFileSync(`${path}.tmp`, '{}');
    renameSync(`${path}.tmp`, path);
    await until(() => watch.version() !== second, 2000, 'the rename seen');
    await until(() => edits() >= 2, 2000, 'the edit told');
  });

  it('ignores the other files in its folder', async () => {
    const { folder, watch, edits } = setup();
    const first = watch.version();
    writeFileSync(join(folder, 'exec-approvals.json'), '{}');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(watch.version()).toBe(first);
    expect(edits()).toBe(0);
  });

  it('without a folder, looks at the file at each look, and watches it once it appears', async () => {
    const { folder, path, watch, edits } = setup({ folder: false });
    const none = watch.version();
    mkdirSync(folder, { recursive: true });
    writeFileSync(path, '{}');
    // Seen at the very next look, with no event to wait for.
    const created = watch.version();
    expect(created).not.toBe(none);
    // Then watched: a write is told without a look.
    await until(() => edits() === 1, 2000, 'the creation told');
    writeFileSync(path, '{ agents: {} }');
    await until(() => edits() === 2, 2000, 'the write told without a look');
    expect(watch.version()).not.toBe(created);
  });

  it('follows its folder removed and made again', async () => {
    const { folder, path, watch } = setup();
    const first = watch.version();
    rmSync(folder, { recursive: true });
    await until(() => watch.version() !== first, 2000, 'the removal seen');
    const gone = watch.version();
    mkdirSync(folder, { recursive: true });
    writeFileSync(path, '{}');
    expect(watch.version()).not.toBe(gone);
  });

  it('looks through a symlink at each look (its target lives elsewhere)', () => {
    const { folder } = setup();
    const target = join(folder, '..', 'dotfiles-openclaw.json');
    writeFileSync(target, '{}');
    const link = join(folder, 'linked.json');
    symlinkSync(target, link);
    const clock = { ms: 0 };
    const watch = new OpenClawFileWatch({ path: link, onEdit: () => {}, now: () => clock.ms });
    made.push(watch);
    const first = watch.version();
    writeFileSync(target, '{ tools: { profile: "full" } }');
    // Within STAT_EVERY_MS of the last stat a look answers from it; past it, it stats again and sees the write.
    clock.ms += STAT_EVERY_MS - 1;
    expect(watch.version()).toBe(first);
    clock.ms += 1;
    expect(watch.version()).not.toBe(first);
  });

  it('tells nothing once closed', async () => {
    const { path, watch, edits } = setup();
    watch.version();
    watch.close();
    writeFileSync(path, '{ tools: {} }');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(edits()).toBe(0);
  });
});
