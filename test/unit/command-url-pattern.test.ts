import { describe, expect, it } from 'vitest';
import { DEFAULT_URL_PATTERN } from '../../src/tunnel/command-provider.js';
import { DEFAULT_SETTINGS } from '../../src/settings/schema.js';

// The command tunnel reads the first URL matching this pattern from the command's output.
const first = (text: string) => new RegExp(DEFAULT_URL_PATTERN).exec(text)?.[0];

describe('the default tunnel URL pattern', () => {
  it('skips links with a path (cloudflared prints a docs link first) and takes the bare https origin', () => {
    const output = [
      'INF Thank you for trying Cloudflare Tunnel. See https://developers.cloudflare.com/cloudflare-one/connections for more',
      'INF +--------------------------------------------------------------------------------------------+',
      'INF |  https://quiet-fox-42.trycloudflare.com                                                    |',
    ].join('\n');
    expect(first(output)).toBe('https://quiet-fox-42.trycloudflare.com');
  });

  it('reads ngrok and localtunnel-style lines, with or without a port', () => {
    expect(first('t=2026 lvl=info msg="started tunnel" url=https://ab12.ngrok-free.app')).toBe(
      'https://ab12.ngrok-free.app',
    );
    expect(first('your url is: https://my.example.com:8443 ')).toBe('https://my.example.com:8443');
    expect(first('plain http://a.example only')).toBeUndefined();
  });

  it('is the settings default too', () => {
    expect(DEFAULT_SETTINGS.tunnelUrlPattern).toBe(DEFAULT_URL_PATTERN);
  });
});
