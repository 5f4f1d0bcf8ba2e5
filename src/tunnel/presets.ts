import type { TunnelPresetView } from '../protocol/console-api.js';

/**
 * Stable-address providers as presets of the `command` tunnel: each tool's command line, the line of its
 * output that holds the public URL, and what it needs. With one of them the agent's id stays the same across
 * restarts, unlike localtunnel's. The values an operator fills in go into a shell command line, so each must
 * match its pattern in full: letters, digits, dots and dashes only (a guard against shell injection).
 */
export interface TunnelPreset extends TunnelPresetView {
  /** How the public URL appears in the tool's output; `{<field>}` stands for the field's value. */
  urlPattern: string;
}

const HOSTNAME =
  '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+';

export const TUNNEL_PRESETS: readonly TunnelPreset[] = [
  {
    id: 'tailscale-funnel',
    label: 'Tailscale Funnel',
    needs:
      'Tailscale 1.52 or later, installed and logged in on this machine (the `tailscale` command on its PATH), ' +
      'with HTTPS certificates and Funnel allowed for your tailnet in its admin console; on Linux, let your ' +
      'user set it up once with `sudo tailscale set --operator=$USER`. The address is ' +
      'https://<machine>.<tailnet>.ts.net:8443 for as long as the machine keeps its name. Tailscale is what ' +
      "OpenClaw recommends for exposure; port 8443 leaves 443 to OpenClaw's own Tailscale Serve.",
    // Foreground: the funnel lasts as long as the command runs, and ends when the agent stops it.
    command: 'tailscale funnel --https=8443 {port}',
    // `Available on the internet:`, a blank line, then `https://<machine>.<tailnet>.ts.net:8443/`.
    urlPattern: '^https://[A-Za-z0-9.-]+\\.ts\\.net:8443(?=/?$)',
    fields: [],
  },
  {
    id: 'cloudflared-named',
    label: 'Cloudflare named tunnel',
    needs:
      'cloudflared logged in to your Cloudflare account (`cloudflared tunnel login`), a named tunnel ' +
      '(`cloudflared tunnel create <name>`) and a DNS route from a host name on your domain to it ' +
      '(`cloudflared tunnel route dns <name> <host name>`); macOS or Linux (the line is a POSIX shell pipe). ' +
      'The address is https://<host name>, yours for good.',
    // cloudflared never prints the host name of a named tunnel: once its first connection to Cloudflare is
    // registered, the shell prints it (every line of cloudflared's log passes through as it comes).
    command:
      'cloudflared tunnel --no-autoupdate run --url http://127.0.0.1:{port} {tunnel} 2>&1 | ' +
      'while IFS= read -r line; do printf "%s\\n" "$line"; case $line in *"Registered tunnel connection"*) ' +
      '[ -n "$up" ] || { up=1; echo "Public URL: https://{hostname}"; } ;; esac; done',
    urlPattern: '(?<=^Public URL: )https://{hostname}$',
    fields: [
      {
        name: 'tunnel',
        label: 'Tunnel name',
        placeholder: 'agent-bridge',
        help: 'The name you gave `cloudflared tunnel create`.',
        pattern: '[A-Za-z0-9][A-Za-z0-9_-]{0,63}',
      },
      {
        name: 'hostname',
        label: 'Host name',
        placeholder: 'agent.example.com',
        help: 'The host name routed to the tunnel (`cloudflared tunnel route dns`).',
        pattern: HOSTNAME,
      },
    ],
  },
  {
    id: 'ngrok-domain',
    label: 'ngrok with a reserved domain',
    needs:
      'ngrok 3.16 or later with your authtoken saved (`ngrok config add-authtoken <token>`), and a domain ' +
      "reserved in ngrok's dashboard (a free account has one). The address is https://<domain>.",
    // Without a terminal ngrok prints nothing unless asked to log: `--log stdout` carries the URL line.
    command: 'ngrok http 127.0.0.1:{port} --url https://{domain} --log stdout --log-format logfmt',
    // `t=... lvl=info msg="started tunnel" obj=tunnels name=command_line addr=http://... url=https://<domain>`
    urlPattern: '(?<=\\burl=)https://{domain}$',
    fields: [
      {
        name: 'domain',
        label: 'Reserved domain',
        placeholder: 'your-name.ngrok.app',
        help: "The domain from ngrok's dashboard (Domains), without https://.",
        pattern: HOSTNAME,
      },
    ],
  },
];

/** What the console shows of each preset (its URL pattern is the agent's business). */
export function presetViews(): TunnelPresetView[] {
  return TUNNEL_PRESETS.map(({ urlPattern: _, ...view }) => structuredClone(view));
}

export interface PresetProblem {
  field: string;
  message: string;
}

/** A preset that cannot be used as asked: no such preset, or values that do not match their patterns. */
export class PresetError extends Error {
  constructor(
    message: string,
    readonly problems: PresetProblem[],
  ) {
    super(message);
  }
}

/** The preset's command line and URL pattern with `values` filled in; throws PresetError naming each bad field. */
export function renderPreset(
  id: string,
  values: Record<string, unknown>,
): { preset: TunnelPreset; command: string; urlPattern: string } {
  const preset = TUNNEL_PRESETS.find((candidate) => candidate.id === id);
  if (!preset) {
    const known = TUNNEL_PRESETS.map((candidate) => candidate.id).join(', ');
    throw new PresetError(`No tunnel preset "${String(id).slice(0, 60)}": use one of ${known}.`, [
      { field: 'id', message: `id: must be one of ${known}` },
    ]);
  }
  const problems: PresetProblem[] = [];
  let { command, urlPattern } = preset;
  for (const field of preset.fields) {
    const value = values[field.name];
    if (typeof value !== 'string' || !new RegExp(`^(?:${field.pattern})$`).test(value)) {
      problems.push({
        field: field.name,
        message: `${field.name}: ${field.label} must be like ${field.placeholder} (letters, digits, dots and dashes)`,
      });
      continue;
    }
    command = command.replaceAll(`{${field.name}}`, value);
    urlPattern = urlPattern.replaceAll(`{${field.name}}`, value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
  if (problems.length > 0) {
    throw new PresetError(
      `The ${preset.label} preset needs: ${problems.map((p) => p.message).join('; ')}.`,
      problems,
    );
  }
  return { preset, command, urlPattern };
}
