import { RequestMalformedError } from '@a2a-js/sdk/errors';

/**
 * v0.3 push configs name a list of authentication schemes; v1.0 has one. The SDK's compatibility layer keeps
 * the first and prints every one of them to the operator's terminal, as sent, when there are more (outside
 * review, finding 4: forged lines and escape sequences, from a request that needs no task and counts against
 * no limit). More than a handful is no webhook's need.
 */
export const MAX_PUSH_SCHEMES = 4;

/** An HTTP authentication scheme name (RFC 9110 §11.1: a token), as a webhook's Authorization header takes it. */
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

type Json = Record<string, unknown>;

/**
 * A v0.3 JSON-RPC request with its push config's schemes checked, before the SDK's compatibility layer reads
 * them: at most MAX_PUSH_SCHEMES scheme names, of which only the first is passed on (what the SDK would keep,
 * without its warning). The config is where `tasks/pushNotificationConfig/set` and `message/send` or
 * `message/stream` carry it. Anything else is returned as it is.
 */
export function checkedLegacyPush(request: Json): Json {
  const params = asObject(request.params);
  if (!params) return request;
  const set = withFirstScheme(asObject(params.pushNotificationConfig));
  const configuration = asObject(params.configuration);
  const sent = withFirstScheme(asObject(configuration?.pushNotificationConfig));
  if (!set && !sent) return request;
  const checked = { ...params };
  if (set) checked.pushNotificationConfig = set;
  if (sent) checked.configuration = { ...configuration, pushNotificationConfig: sent };
  return { ...request, params: checked };
}

/** The config with one scheme left, once all are checked; undefined when it has no list to check. */
function withFirstScheme(config: Json | undefined): Json | undefined {
  const authentication = asObject(config?.authentication);
  const schemes = authentication?.schemes;
  if (schemes === undefined) return undefined;
  const field = 'pushNotificationConfig.authentication.schemes';
  if (!Array.isArray(schemes)) {
    throw new RequestMalformedError(`${field} must be a list of scheme names (at most ${MAX_PUSH_SCHEMES}).`);
  }
  if (schemes.length > MAX_PUSH_SCHEMES) {
    throw new RequestMalformedError(
      `${field} holds ${schemes.length} schemes; send at most ${MAX_PUSH_SCHEMES} (the first is used).`,
    );
  }
  const bad = schemes.findIndex((scheme) => typeof scheme !== 'string' || !SCHEME.test(scheme));
  if (bad >= 0) {
    throw new RequestMalformedError(
      `${field}[${bad}] is not an HTTP authentication scheme name: 1 to 64 letters, digits or !#$%&'*+-.^_\`|~ (such as Bearer), at most ${MAX_PUSH_SCHEMES}.`,
    );
  }
  return { ...config, authentication: { ...authentication, schemes: schemes.slice(0, 1) } };
}

function asObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}
