/**
 * Whether this machine can run OpenClaw's Podman sandbox (Podman, OpenClaw's sandbox image built locally by
 * scripts/openclaw/sandbox-image.sh, and a container that starts as OpenClaw starts one), and the Podman
 * settings the gateway then needs. Shared by the test:openclaw files that run a sandboxed agent.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const SANDBOX_IMAGE = 'openclaw-sandbox:bookworm-slim';

export type ContainerRuntime = { ok: true; env: NodeJS.ProcessEnv } | { ok: false; why: string };

/**
 * Podman with OpenClaw's sandbox image, able to start a container as OpenClaw does (`--init`, no network).
 * Where the stock runtime cannot (crun and a hybrid cgroup tree, or ulimits above the host's hard limits, as
 * in some VMs), a containers.conf of this test's own picks runc and lower ulimits, given to the gateway as
 * CONTAINERS_CONF; the operator's machine needs neither. `releasePodman` removes that file.
 */
export async function probePodman(): Promise<ContainerRuntime> {
  const version = await run('podman', ['--version']);
  if (version.status !== 0)
    return { ok: false, why: 'Podman is not installed (apt-get install podman catatonit)' };
  const image = await run('podman', ['image', 'exists', SANDBOX_IMAGE]);
  if (image.status !== 0) {
    return {
      ok: false,
      why: `no ${SANDBOX_IMAGE} in Podman's store (sh scripts/openclaw/sandbox-image.sh builds it)`,
    };
  }
  const probe = ['run', '--rm', '--init', '--network', 'none', SANDBOX_IMAGE, 'true'];
  const plain = await run('podman', probe);
  if (plain.status === 0) return { ok: true, env: {} };
  const dir = mkdtempSync(join(tmpdir(), 'podman-conf-'));
  const conf = join(dir, 'containers.conf');
  writeFileSync(
    conf,
    '[containers]\ndefault_ulimits = ["nofile=1024:2048", "nproc=256:256"]\n[engine]\nruntime = "runc"\n',
  );
  const tuned = await run('podman', probe, { CONTAINERS_CONF: conf });
  if (tuned.status === 0) return { ok: true, env: { CONTAINERS_CONF: conf } };
  rmSync(dir, { recursive: true, force: true });
  return {
    ok: false,
    why: `Podman cannot start a container here: ${plain.out.trim()} / ${tuned.out.trim()}`,
  };
}

/** Removes the containers.conf probePodman wrote, if it wrote one. */
export function releasePodman(runtime: ContainerRuntime): void {
  if (runtime.ok && runtime.env.CONTAINERS_CONF) {
    rmSync(dirname(runtime.env.CONTAINERS_CONF), { recursive: true, force: true });
  }
}

export function run(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({
        status: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
        out: `${stdout}${stderr}`,
      });
    });
  });
}
