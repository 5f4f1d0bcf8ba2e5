// What `serve` prints for the console (issue 11, item 7): the link with its token only to a person at a
// terminal; anywhere else (a service, a container, a pipe: output that ends up in logs) the address and a
// command that prints the link from console.json.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consoleLinkLines, mayPrintConsoleToken } from '../../src/console/console-file.js';

const info = { url: 'http://127.0.0.1:8788', token: 'tVn7scGaiOdDyV1QFJMZ' };

describe('mayPrintConsoleToken', () => {
  it.each([
    [true, true, true],
    [false, true, false], // docker run -t without -i: stdout is a terminal, and the container's log
    [true, false, false], // systemd, nohup, a pipe: stdout goes to a file or the journal
    [undefined, undefined, false],
  ])('stdin a TTY: %s, stdout a TTY: %s -> %s', (stdin, stdout, expected) => {
    expect(mayPrintConsoleToken({ stdin: { isTTY: stdin }, stdout: { isTTY: stdout } })).toBe(expected);
  });
});

describe('consoleLinkLines', () => {
  it('prints the link with its token at a terminal', () => {
    expect(consoleLinkLines(info, '/data/console.json', true)).toEqual([
      '  Console:    http://127.0.0.1:8788/#token=tVn7scGaiOdDyV1QFJMZ',
      '              (open it in a browser; the link is also in /data/console.json)',
    ]);
  });

  it('elsewhere prints no token, but the address and a command that prints the link', () => {
    const lines = consoleLinkLines(info, '/home/you/.config/Agent Bridge/console.json', false);
    expect(lines.join('\n')).not.toContain(info.token);
    expect(lines).toEqual([
      '  Console:    http://127.0.0.1:8788/ (its token is not printed here: this output may be kept in a log)',
      `              Get the link with the token: jq -r '.url + "/#token=" + .token' '/home/you/.config/Agent Bridge/console.json'`,
    ]);
  });

  it('prints a command that works as printed, whatever the path holds', () => {
    const dir = mkdtempSync(join(tmpdir(), "it's a $dir "));
    try {
      const file = join(dir, 'console.json');
      writeFileSync(file, JSON.stringify(info));
      const command = consoleLinkLines(info, file, false)[1]!.replace(/^.*Get the link with the token: /, '');
      // Run as printed where jq is installed; elsewhere `cat` stands in for it, to check the quoting.
      const hasJq = spawnSync('jq', ['--version']).status === 0;
      const run = hasJq ? command : command.replace(/^jq -r '[^']*' /, 'cat ');
      const printed = execFileSync('sh', ['-c', run], { encoding: 'utf8' });
      if (hasJq) expect(printed).toBe(`${info.url}/#token=${info.token}\n`);
      else expect(JSON.parse(printed)).toEqual(info);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
