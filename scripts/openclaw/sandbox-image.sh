#!/bin/sh
# Builds OpenClaw's default sandbox image, openclaw-sandbox:bookworm-slim, into the local Podman store with no
# image registry: a Debian bookworm root filesystem from the Debian mirror (debootstrap), imported as a base
# image, then OpenClaw's own Containerfile steps (docs/gateway/sandboxing/images-and-setup.md: bash,
# ca-certificates, curl, git, jq, python3, ripgrep; a `sandbox` user; `sleep infinity`).
# test/openclaw/skill-classes.test.ts runs a sandboxed skill's exec in it when it exists.
#
#   apt-get install podman catatonit debootstrap   # once, as root
#   sh scripts/openclaw/sandbox-image.sh
#
# MIRROR picks another Debian mirror; CONTAINERS_CONF is passed to Podman (the test writes one with runc and
# lower ulimits for hosts where crun cannot start containers, e.g. hybrid cgroups in a VM).
set -eu
IMAGE=openclaw-sandbox:bookworm-slim
BASE=localhost/openclaw-sandbox-base:bookworm
MIRROR=${MIRROR:-http://deb.debian.org/debian}

command -v podman >/dev/null || { echo "podman is not installed: apt-get install podman catatonit" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debootstrap is not installed: apt-get install debootstrap" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! podman image exists "$BASE"; then
  debootstrap --variant=minbase --include=bash,ca-certificates,curl,git,jq,python3,ripgrep \
    bookworm "$work/rootfs" "$MIRROR"
  tar -C "$work/rootfs" -c . | podman import - "$BASE"
fi
cat >"$work/Containerfile" <<EOF
FROM $BASE
RUN useradd --create-home --shell /bin/bash sandbox
USER sandbox
WORKDIR /home/sandbox
CMD ["sleep", "infinity"]
EOF
podman build --pull=never --network none -t "$IMAGE" -f "$work/Containerfile" "$work"
echo "built $IMAGE"
