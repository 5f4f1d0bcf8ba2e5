// Who `agent-bridge call` signs as: the agent running on the data dir, with its own key. The agent called
// checks the signature against that agent's card (or, for an agent calling itself, against its own keys), so
// the agent must be running, and its id is the one it has now (a tunnel's address changes it), as its
// console reports it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KeyStore } from '../keys/keystore.js';
import { KEY_FILE_NAME } from '../keys/key-file.js';
import type { SettingsResponse, StatusResponse } from '../protocol/console-api.js';
import type { Signer } from '../protocol/index.js';
import { readConsoleFile } from './keys-client.js';

export interface CallerIdentity {
  /** The running agent's id: the envelope's `from`. */
  id: string;
  signer: Signer;
}

/** `start`: the command that starts the agent on this data dir, for the messages. */
export async function callerIdentity(dataDir: string, start: string): Promise<CallerIdentity> {
  const notRunning = (why: string) =>
    new Error(
      `No agent runs on ${dataDir} (${why}). A call is signed as that agent, and the agent called checks ` +
        `the signature against its card, so start it first: ${start} (or name its data dir with --data-dir).`,
    );
  const running = readConsoleFile(dataDir);
  if (!running) throw notRunning('its console.json names no running console');
  const get = async <T>(path: string): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${running.url}${path}`, {
        headers: { Authorization: `Bearer ${running.token}` },
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      const code = ((error as Error).cause as { code?: unknown } | undefined)?.code;
      if (code === 'ECONNREFUSED') throw notRunning(`its console at ${running.url} is not listening`);
      throw new Error(
        `The console of the agent on ${dataDir} (${running.url}) did not answer: check that the agent is well, then try again.`,
      );
    }
    if (!response.ok) {
      throw new Error(
        `The console of the agent on ${dataDir} (${running.url}) answered HTTP ${response.status} to ${path}: ` +
          'if its token was replaced, console.json has the new one once the agent restarts.',
      );
    }
    return (await response.json()) as T;
  };
  const status = await get<StatusResponse>('/api/status');
  const { settings } = await get<SettingsResponse>('/api/settings');
  const keysFile = typeof settings.keysFile === 'string' ? settings.keysFile : join(dataDir, KEY_FILE_NAME);
  // KeyStore.open makes a key where there is none: an identity is never made here.
  if (!existsSync(keysFile)) {
    throw new Error(
      `The agent on ${dataDir} runs, but its key file ${keysFile} is not readable from here: run the call on ` +
        'the machine and as the user that runs the agent.',
    );
  }
  const cardTTL = typeof settings.cardTTL === 'number' ? settings.cardTTL : 300;
  const { signer } = KeyStore.open(dataDir, { cardTTLSeconds: cardTTL, path: keysFile });
  const listed = status.agent.card.publicKeys.some((key) => key.kid === signer.kid && key.active);
  if (!listed) {
    throw new Error(
      `The key in ${keysFile} (${signer.kid}) is not an active key on the card of the agent running on ` +
        `${dataDir} (${status.agent.id}): it rotated its key a moment ago, or runs with another key file. Try ` +
        'again; if it persists, restart the agent.',
    );
  }
  return { id: status.agent.id, signer };
}
