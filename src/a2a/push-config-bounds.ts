import type { TaskPushNotificationConfig } from '@a2a-js/sdk';

/**
 * How large each part of a push notification config may be, in characters. A config is kept with its task
 * for the task's whole retention (in the data dir's memory and task file, or in Redis) and is read at
 * every notification; unbounded, four configs with 240 KB URLs kept about 1 MB per task, 200 MB per caller
 * at its task cap (security review, finding 2). At these bounds a task's four configs keep about 18 KB.
 */
export const PUSH_CONFIG_BOUNDS = {
  /** What public web addresses keep to (old browsers took about 2,000 characters); a webhook needs less. */
  url: 2048,
  /** A config id is a name the caller chose or a UUID (36 characters). */
  id: 128,
  /** "A token unique for this task or session": a UUID has 36 characters, 256 random bits in hex 64. */
  token: 256,
  /** An IANA HTTP authentication scheme name; the longest registered (SCRAM-SHA-256) has 13. */
  scheme: 32,
  /** A bearer token or Basic credentials minted for this webhook: a signed JWT with its usual claims fits. */
  credentials: 2048,
} as const;

/** What goes in a header: visible ASCII only (a CR or LF would split the notification's request). */
const HEADER_VALUE = /^[\x21-\x7e]+$/;

/**
 * Why a config cannot be kept, in words that say what to change, or undefined. Its URL's address is the
 * webhook rules' (pushUrlProblem), checked after this: a URL past its bound is not even parsed.
 */
export function pushConfigProblem(config: TaskPushNotificationConfig): string | undefined {
  const { url, id, token, authentication, tenant } = config;
  const bounds = PUSH_CONFIG_BOUNDS;
  // The SDK keeps a config's `tenant` as sent; this agent has none (GatedHandler.enter says so too).
  if (tenant) return 'This agent has no tenants: leave "tenant" empty.';
  // v1.0 decoding makes every field a string; the SDK's v0.3 conversion passes on what it was sent (an
  // array of one long string would pass a length check and be kept).
  const texts = [
    url,
    id,
    token,
    ...(authentication ? [authentication.scheme, authentication.credentials] : []),
  ];
  if (texts.some((value) => typeof value !== 'string')) {
    return 'The push notification url, id, token, scheme and credentials must be strings.';
  }
  if (url.length > bounds.url) {
    return `The push notification URL has ${url.length} characters; at most ${bounds.url} are taken (a webhook address needs no more).`;
  }
  if (id.length > bounds.id) {
    return `The push notification config id has ${id.length} characters; at most ${bounds.id} are taken (leave it empty and one is made).`;
  }
  if (token.length > bounds.token) {
    return `The push notification token has ${token.length} characters; at most ${bounds.token} are taken.`;
  }
  const scheme = authentication?.scheme ?? '';
  if (scheme.length > bounds.scheme) {
    return `The push notification authentication scheme has ${scheme.length} characters; at most ${bounds.scheme} are taken (a scheme is a name such as Bearer).`;
  }
  const credentials = authentication?.credentials ?? '';
  if (credentials.length > bounds.credentials) {
    return `The push notification credentials have ${credentials.length} characters; at most ${bounds.credentials} are taken.`;
  }
  if ([token, scheme, credentials].some((value) => value && !HEADER_VALUE.test(value))) {
    return 'The push notification token, scheme and credentials must be visible ASCII without spaces.';
  }
  return undefined;
}
