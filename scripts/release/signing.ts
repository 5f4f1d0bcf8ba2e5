// Release step before packaging: decides from the secrets present whether this platform's build is signed
// (and, on macOS, notarised), says so in the log, tells electron-builder, and records the answer in
// dist/electron/build-info.json so the installed app knows whether it may update itself.
// Usage (in .github/workflows/release.yml): tsx scripts/release/signing.ts linux|mac|win
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILD_INFO_FILE, type BuildInfo } from '../../electron/build-info.js';

export type Platform = 'linux' | 'mac' | 'win';

export interface SigningPlan {
  signed: boolean;
  notarised: boolean;
  /** Lines for the workflow log, as GitHub annotations. */
  notices: { level: 'notice' | 'warning'; text: string }[];
  /**
   * Environment for the next steps (never a secret's value); SIGNING_BUILDER_ARGS is added to
   * electron-builder's command line.
   */
  exports: Record<string, string>;
  /** The App Store Connect API key to write to a file for notarisation (its content is a secret). */
  appleApiKey?: string;
}

const NOTARY = ['APPLE_API_KEY_P8', 'APPLE_API_KEY_ID', 'APPLE_API_ISSUER'] as const;

/**
 * The secrets, by the names the workflow gives them: CSC_LINK (macOS .p12, base64), WIN_CSC_LINK (Windows
 * .pfx, base64), and for notarisation an App Store Connect API key (APPLE_API_KEY_P8 with its id and issuer).
 */
export function signingPlan(platform: Platform, env: NodeJS.ProcessEnv): SigningPlan {
  const has = (name: string) => (env[name] ?? '').trim() !== '';
  if (platform === 'linux') {
    return {
      signed: false,
      notarised: false,
      notices: [
        {
          level: 'warning',
          text: 'This Linux build is unsigned: electron-builder cannot sign AppImage or deb packages, so installed Linux apps do not update themselves (operators download new versions from the release page).',
        },
      ],
      exports: {},
    };
  }
  if (platform === 'win') {
    if (has('WIN_CSC_LINK'))
      return {
        signed: true,
        notarised: false,
        notices: [{ level: 'notice', text: 'Signing the Windows installer (WIN_CSC_LINK is set).' }],
        exports: {},
      };
    return {
      signed: false,
      notarised: false,
      notices: [
        {
          level: 'warning',
          text: 'This Windows build is unsigned: the WIN_CSC_LINK secret is not set. SmartScreen will warn operators, and installed apps will not update themselves.',
        },
      ],
      exports: {},
    };
  }
  if (!has('CSC_LINK')) {
    return {
      signed: false,
      notarised: false,
      notices: [
        {
          level: 'warning',
          text: 'This macOS build is unsigned and not notarised: the MAC_CSC_LINK secret is not set. Gatekeeper will block it until the operator allows it in System Settings, and installed apps will not update themselves.',
        },
      ],
      exports: {
        // Without a certificate, electron-builder must not pick whatever identity the runner's keychain has;
        // the app is signed ad hoc instead (an Apple silicon Mac runs no unsigned code), without the hardened
        // runtime, which an ad-hoc signature cannot satisfy (electron.build/code-signing).
        CSC_IDENTITY_AUTO_DISCOVERY: 'false',
        SIGNING_BUILDER_ARGS: '-c.mac.identity=- -c.mac.hardenedRuntime=false',
      },
    };
  }
  const missing = NOTARY.filter((name) => !has(name));
  if (missing.length > 0) {
    return {
      signed: true,
      notarised: false,
      notices: [
        { level: 'notice', text: 'Signing the macOS app (MAC_CSC_LINK is set).' },
        {
          level: 'warning',
          text: `This macOS build is signed but not notarised: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set. Gatekeeper will warn operators on first launch.`,
        },
      ],
      exports: {},
    };
  }
  return {
    signed: true,
    notarised: true,
    notices: [
      {
        level: 'notice',
        text: 'Signing the macOS app (MAC_CSC_LINK is set) and notarising it with the App Store Connect API key.',
      },
    ],
    exports: {},
    appleApiKey: env.APPLE_API_KEY_P8,
  };
}

/** The releases page of the repository the workflow runs in (GitHub's default variables), if known. */
export function releasesUrl(env: NodeJS.ProcessEnv): string | undefined {
  const server = env.GITHUB_SERVER_URL;
  const repository = env.GITHUB_REPOSITORY;
  if (!server || !repository || !/^[\w.-]+\/[\w.-]+$/.test(repository)) return undefined;
  return `${server.replace(/\/+$/, '')}/${repository}/releases`;
}

function main(): void {
  const platform = process.argv[2];
  if (platform !== 'linux' && platform !== 'mac' && platform !== 'win') {
    console.error('Usage: tsx scripts/release/signing.ts linux|mac|win');
    process.exit(2);
  }
  const plan = signingPlan(platform, process.env);
  for (const notice of plan.notices) console.log(`::${notice.level}::${notice.text}`);
  const exports = { ...plan.exports };
  if (plan.appleApiKey) {
    // electron-builder's notarisation reads the key from a file (APPLE_API_KEY is its path).
    const keyFile = join(process.env.RUNNER_TEMP ?? dirname(BUILD_INFO_FILE), 'apple-api-key.p8');
    writeFileSync(keyFile, plan.appleApiKey, { mode: 0o600 });
    exports.APPLE_API_KEY = keyFile;
  }
  const envFile = process.env.GITHUB_ENV;
  for (const [name, value] of Object.entries(exports)) {
    if (envFile) appendFileSync(envFile, `${name}=${value}\n`);
    else console.log(`${name}=${value}`);
  }
  const url = releasesUrl(process.env);
  const info: BuildInfo = { signed: plan.signed, ...(url ? { releasesUrl: url } : {}) };
  mkdirSync(dirname(BUILD_INFO_FILE), { recursive: true });
  writeFileSync(BUILD_INFO_FILE, `${JSON.stringify(info, null, 2)}\n`);
  console.log(`${BUILD_INFO_FILE}: ${JSON.stringify(info)}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
