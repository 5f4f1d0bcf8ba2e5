// Outside review, finding 4: the A2A SDK prints what a caller sends to the operator's terminal as it is. It
// warned `Reference task <id> not found.` for each of a message's referenceTaskIds, and its v0.3 layer warned
// of a push config's `authentication.schemes` (that request needs no task and counts against no limit); a
// caller put newlines and escape sequences there, forging lines and driving the terminal (one request wrote
// 60,000 lines). The real CLI (`serve`) in a child process, keyless callers under the `open` policy, the
// gateway double; raw requests over v1.0 JSON-RPC, v0.3 JSON-RPC and HTTP+JSON. Both tests failed before
// their fix: the first found the forged lines and escapes, the second the SDK's lines bare and unbounded.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { tempDir } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

const FORGED = '\nAgent Bridge: forged line\u001b[2J\u001b]0;owned\u0007\r12:00:00 200 accepted';
/** As many as the body limit takes (about 175 KB of JSON): the SDK warned once for each. */
const MANY = Array.from({ length: 2000 }, (_, i) => `${FORGED} ${i}`);

let gateway: GatewayDouble;
let child: ChildAgent;
const dataDir = tempDir('agent-bridge-library-output-');

beforeAll(async () => {
  gateway = await startGatewayDouble();
  const port = await freePort();
  child = await startChildAgent([
    '--data-dir',
    dataDir,
    '--port',
    String(port),
    '--console-port',
    '0',
    '--tunnel',
    'none',
    '--access',
    'open',
    '--gateway-url',
    gateway.url,
    '--gateway-token',
    gateway.token,
  ]);
}, 30_000);

afterAll(async () => {
  if (child?.process.exitCode === null) child.process.kill('SIGKILL');
  await gateway?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;

function rpc(version: '1.0' | '0.3', method: string, params: Json): Promise<Response> {
  return fetch(`${child.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': version },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
}

function rest(path: string, body: Json): Promise<Response> {
  return fetch(`${child.url}/a2a/rest${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify(body),
  });
}

const v1Message = (referenceTaskIds: unknown[]) => ({
  message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }], referenceTaskIds },
});
const v03Message = (referenceTaskIds: unknown[], extra: Json = {}) => ({
  message: {
    kind: 'message',
    messageId: randomUUID(),
    role: 'user',
    parts: [{ kind: 'text', text: 'hi' }],
    referenceTaskIds,
  },
  ...extra,
});
const v03Push = (schemes: unknown[]) => ({
  url: 'https://hooks.example.com/a2a',
  authentication: { schemes, credentials: 'secret' },
});

/** The error of a JSON-RPC answer, or of an HTTP+JSON one (google.rpc.Status). */
async function errorOf(response: Response): Promise<{ code: number; message: string }> {
  const body = (await response.json()) as { error?: { code: number; message: string } };
  return body.error ?? { code: 0, message: JSON.stringify(body) };
}

/** The request lines `serve` printed so far (each answered request prints one). */
const trafficLines = () =>
  child
    .output()
    .split('\n')
    .filter((line) => /^\d\d:\d\d:\d\d \d{3} /.test(line));

// eslint-disable-next-line no-control-regex -- the point: no raw control character in the output
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/** Counted, not quoted: a failure must not print the escapes it found to the terminal running the tests. */
function expectClean(output: string): void {
  const found = {
    controls: output.match(CONTROLS)?.length ?? 0,
    forgedLines: output.match(/^(Agent Bridge: forged|12:00:00 200 accepted)/gm)?.length ?? 0,
  };
  expect(found, `in ${output.length} characters of output`).toEqual({ controls: 0, forgedLines: 0 });
}

describe('what a caller sends never reaches the output raw, whatever library prints it', () => {
  it('refuses hostile reference task ids and v0.3 auth schemes before the SDK sees them', async () => {
    const before = trafficLines().length;
    const oneBad = [randomUUID(), FORGED];
    const push = (schemes: unknown[]) =>
      rpc('0.3', 'tasks/pushNotificationConfig/set', {
        taskId: randomUUID(),
        pushNotificationConfig: v03Push(schemes),
      });
    const attempts: [string, Promise<Response>, RegExp][] = [
      ['v1.0 JSON-RPC, many', rpc('1.0', 'SendMessage', v1Message(MANY)), /referenceTaskIds.*at most 16/],
      ['v1.0 JSON-RPC, one', rpc('1.0', 'SendMessage', v1Message(oneBad)), /referenceTaskIds\[1\]/],
      ['v0.3 JSON-RPC, many', rpc('0.3', 'message/send', v03Message(MANY)), /referenceTaskIds.*at most 16/],
      [
        'v0.3 JSON-RPC stream, one',
        rpc('0.3', 'message/stream', v03Message(oneBad)),
        /referenceTaskIds\[1\]/,
      ],
      ['HTTP+JSON, many', rest('/message:send', v1Message(MANY)), /referenceTaskIds.*at most 16/],
      ['HTTP+JSON stream, one', rest('/message:stream', v1Message(oneBad)), /referenceTaskIds\[1\]/],
      ['v0.3 push config, many', push(MANY), /authentication\.schemes.*at most 4/],
      ['v0.3 push config, one', push(['Bearer', FORGED]), /authentication\.schemes\[1\]/],
      [
        'v0.3 message with a push config',
        rpc(
          '0.3',
          'message/send',
          v03Message([], { configuration: { pushNotificationConfig: v03Push(MANY) } }),
        ),
        /authentication\.schemes.*at most 4/,
      ],
    ];
    const answers = await Promise.all(attempts.map(([, answer]) => answer));
    await until(() => trafficLines().length >= before + attempts.length, 10_000, 'a line per request');

    const output = child.output();
    expectClean(output);
    // Small: a line per request, not one per id sent.
    expect(output.length).toBeLessThan(20_000);
    for (const [i, [what, , said]] of attempts.entries()) {
      const answer = answers[i]!;
      const error = await errorOf(answer);
      expect(error.message, what).toMatch(said);
      if (what.startsWith('HTTP+JSON')) expect(answer.status, what).toBe(400);
      else expect(error.code, what).toBe(-32602);
    }
  });

  it("cuts the SDK's refusals that quote the caller, in serve's line for the request", async () => {
    const before = trafficLines().length;
    const id = `${FORGED} ${'x'.repeat(150_000)}`;
    const answers = [
      await rpc('1.0', 'GetTask', { id }),
      await rpc('0.3', 'tasks/get', { id }),
      await fetch(`${child.url}/a2a/rest/tasks/${encodeURIComponent(FORGED)}${'x'.repeat(6000)}`),
    ];
    for (const answer of answers) expect([200, 404]).toContain(answer.status);
    await until(() => trafficLines().length >= before + 3, 10_000, 'a line per request');
    const lines = trafficLines().slice(before);
    expect(lines.map((line) => line.length).filter((length) => length > 1000)).toEqual([]);
    for (const line of lines) expect(line).toMatch(/"Task not found: \\nAgent Bridge: forged line\\x1b.*…"/);
    expectClean(child.output());
  });

  it('shows what the SDK still prints as one escaped line each, and at most 20 lines per 10 s', async () => {
    // Well-formed ids of tasks that do not exist: the SDK warns of each (16 a request, the most allowed).
    const ids = () => Array.from({ length: 16 }, () => randomUUID());
    const answers = await Promise.all([
      rpc('1.0', 'SendMessage', v1Message(ids())),
      rpc('0.3', 'message/send', v03Message(ids())),
      rest('/message:send', v1Message(ids())),
    ]);
    for (const answer of answers) expect(answer.status).toBe(200);
    // v0.3 allows several schemes, of which the SDK keeps the first, saying so: nothing to print for that.
    const twoSchemes = await rpc('0.3', 'tasks/pushNotificationConfig/set', {
      taskId: randomUUID(),
      pushNotificationConfig: v03Push(['Bearer', 'Basic']),
    });
    expect((await errorOf(twoSchemes)).message).not.toMatch(/schemes/);

    await until(
      () => /more lines? from libraries/.test(child.output()),
      15_000,
      'the line that counts the rest',
    );
    const output = child.output();
    expectClean(output);
    expect(output).not.toMatch(/Lossy conversion/);
    const lines = output.split('\n');
    const library = lines.filter((line) => line.includes('Reference task'));
    expect(library).toHaveLength(20);
    for (const line of library)
      expect(line).toMatch(/^Library @a2a-js\/sdk: Reference task [0-9a-f-]{36} not found\.$/);
    expect(lines).toContain(
      'Library output: 28 more lines from libraries were not shown in the last 10 s (at most 20 are).',
    );
  }, 30_000);
});
