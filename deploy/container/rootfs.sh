#!/bin/sh
# Assembles everything the container image holds, in one place, for both
# ways the image is built:
#   - the Dockerfile's build stage runs it inside golang:…-bookworm;
#   - ci/container.sh runs it on the host (no registry, no Docker engine)
#     and hands the result to the Dockerfile's final stage with
#     `--build-context build=DIR` (see docs/DEPLOYMENT.md).
# The final stage (FROM scratch) copies OUT/rootfs/ to / and OUT/data/ to
# /data (owned by uid 65532). Nothing else is in the image.
#
#   sh deploy/container/rootfs.sh OUT      (from the repository root)
#
# Needs: go, and the Debian CA bundle (/etc/ssl/certs/ca-certificates.crt,
# package ca-certificates) — the image has no other trust store, and it is
# what Go uses when PVE_CA_FILE and PVE_TLS_FINGERPRINT are not set.
# VERSION (optional) is stamped into the binary (--version).
set -eu
out=${1:?usage: rootfs.sh OUT}
ca=/etc/ssl/certs/ca-certificates.crt
[ -s "$ca" ] || { echo "rootfs.sh: $ca is missing (install ca-certificates)" >&2; exit 1; }
rm -rf "$out/rootfs" "$out/data"
mkdir -p "$out/rootfs/etc/ssl/certs" "$out/rootfs/tmp" "$out/data"
# A static binary (no libc in the image), reproducible paths.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION:-}" \
  -o "$out/rootfs/proxmox-safe-mcp" ./cmd/proxmox-safe-mcp
cp "$ca" "$out/rootfs/etc/ssl/certs/ca-certificates.crt"
# /tmp exists for --demo's temporary audit log when the root file system
# is writable; with a read-only one, mount a tmpfs there or pass --audit-log.
chmod 1777 "$out/rootfs/tmp"
chmod 0755 "$out/rootfs" "$out/rootfs/etc" "$out/rootfs/etc/ssl" "$out/rootfs/etc/ssl/certs"
chmod 0644 "$out/rootfs/etc/ssl/certs/ca-certificates.crt"
chmod 0755 "$out/rootfs/proxmox-safe-mcp"
