import { parseArgs } from 'node:util';
import { printable } from '../lib/text.js';
import { demoDataDir } from '../demo/demo-mode.js';
import { defaultDataDir } from '../settings/data-dir.js';
import { callA2A } from './call-a2a.js';
import { callerIdentity } from './call-identity.js';
import { callSamvad, type CallOutput } from './call-samvad.js';

export const CALL_HELP = `Usage: agent-bridge call <agent> "message" [flags]   (npx agent-bridge call ...)

Sends a message to an agent's chat skill and prints its reply, then what was checked. <agent> is an
agent:// id or a base URL: https://host, or http://127.0.0.1:PORT for an agent on this machine.

Over SAMVAD (the default) the message is signed as the agent running on the data dir, with its own key: the
agent you call checks the signature against that agent's card, so it must be running (npm run serve). The
reply's signature is checked against the card of the agent called, and the key that signed it is named.
An agent on this machine called as itself (the demo: --demo) needs no approval and no other flag.

  --stream            print the reply as it arrives
  --a2a               call over A2A instead: its JSON-RPC or HTTP+JSON interface, as its card lists it
  --key KEY           the A2A key the agent's operator gave you (abk_...). Prefer the environment variable
                      AGENT_BRIDGE_A2A_KEY: a flag shows in the process list to other users of this machine
  --data-dir DIR      the agent whose key signs (env: AGENT_BRIDGE_DATA_DIR; default: the per-user
                      app-data folder, as serve)
  --demo              sign as the demo agent (npm run serve -- --demo): its data dir, <data dir>/demo
  --timeout SECONDS   how long to wait for the reply (default: 120)
  --help              show this help

Exit status: 0 with a reply, 1 otherwise (the reason and what to do on stderr).
`;

const OPTIONS = {
  stream: { type: 'boolean' },
  a2a: { type: 'boolean' },
  key: { type: 'string' },
  'data-dir': { type: 'string' },
  demo: { type: 'boolean' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The flags `call` takes, as it parses them: the docs show no other (test/unit/docs-commands.test.ts). */
export const CALL_OPTIONS = OPTIONS;

/**
 * `agent-bridge call <agent> "message"`: the reply to stdout (as it arrives with --stream), what was sent and
 * checked to stderr; throws an Error that says what to do.
 */
export async function runCallCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    throw new Error(`${(error as Error).message.replace(/\.$/, '')}. Run: agent-bridge call --help`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(CALL_HELP);
    return;
  }
  const [target, message, ...extra] = positionals;
  if (target === undefined || message === undefined || extra.length > 0) {
    throw new Error(
      'Name the agent and the message, the message quoted: agent-bridge call agent://127.0.0.1:8787 "Hello". ' +
        'Run: agent-bridge call --help',
    );
  }
  if (!message.trim()) throw new Error('The message is empty: write something to send.');
  const timeoutMs = timeoutOf(values.timeout);
  const out = terminal();
  if (values.a2a) {
    if (values['data-dir'] !== undefined || values.demo) {
      throw new Error('--a2a calls with an A2A key, not as an agent: drop --data-dir and --demo.');
    }
    const key = values.key ?? (env.AGENT_BRIDGE_A2A_KEY || undefined);
    await callA2A({ target, message, stream: values.stream === true, key, timeoutMs, out });
    return out.end();
  }
  if (values.key !== undefined) {
    throw new Error('--key is an A2A key: add --a2a to call over A2A, or drop --key to call over SAMVAD.');
  }
  if (values.demo && values['data-dir'] !== undefined) {
    throw new Error('--demo names the demo agent, --data-dir another: use one of them.');
  }
  const dataDir = values.demo ? demoDataDir(env) : (values['data-dir'] ?? defaultDataDir(env));
  const start = values.demo ? 'npm run serve -- --demo' : `npm run serve -- --data-dir '${dataDir}'`;
  const caller = await callerIdentity(dataDir, start);
  await callSamvad({ target, message, stream: values.stream === true, timeoutMs, caller, out });
  out.end();
}

function timeoutOf(text: string | undefined): number {
  if (text === undefined) return 120_000;
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text.trim()) || seconds < 1 || seconds > 3600) {
    throw new Error(`--timeout takes seconds from 1 to 3600, not "${printable(text)}".`);
  }
  return Math.round(seconds * 1000);
}

/**
 * The reply to stdout, its lines kept and every other character that could drive the terminal escaped (it is
 * the other agent's text); the notes to stderr, after a line break that ends the reply.
 */
function terminal(): CallOutput & { end(): void } {
  let open = false;
  return {
    reply(text) {
      process.stdout.write(text.split('\n').map(printable).join('\n'));
      open = !text.endsWith('\n');
    },
    note(text) {
      if (open) process.stdout.write('\n');
      open = false;
      process.stderr.write(`${text}\n`);
    },
    end() {
      if (open) process.stdout.write('\n');
      open = false;
    },
  };
}
