#!/usr/bin/env bash
# Builds the whole Dockerfile, build stage included, and checks that it
# makes the same image CI builds. Opt-in (about 7 minutes here, most of it
# vfs copying the Go toolchain and a cold compile), not part of .ci/run:
#
#   CONTAINER_FULL_BUILD=1 bash ci/container.sh
#
# ci/container.sh provides a private podman (CONTAINER_PODMAN), its image
# (CONTAINER_IMAGE), the VERSION and binary it built (CONTAINER_VERSION,
# CONTAINER_BINARY), the image's file list (CONTAINER_FILES) and a work
# directory it removes afterwards (CONTAINER_WORK).
#
# golang:1.26.8-bookworm cannot be pulled here, so a stand-in is built
# under that name: the host's Go toolchain (/usr/local/go, which must be the
# Dockerfile's 1.26.8), dash as /bin/sh, the coreutils rootfs.sh uses with
# their libraries, Debian's CA bundle, and the official image's
# environment (GOPATH=/go, GOTOOLCHAIN=local, PATH). The Dockerfile is then
# built unchanged, `go mod download` reaching the Go module proxy through
# the host network. Checks: the resulting image has the same file list as
# CI's and a byte-identical binary (Go builds are reproducible with
# -trimpath and the same toolchain, flags, source and VERSION).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${CONTAINER_PODMAN:?run by ci/container.sh}" "${CONTAINER_VERSION:?}" "${CONTAINER_BINARY:?}" "${CONTAINER_FILES:?}" "${CONTAINER_WORK:?}"
W="$CONTAINER_WORK/fullbuild"
GO_IMAGE="$(awk '/^FROM .* AS build$/ {print $2}' "$ROOT/Dockerfile")"

say() { printf 'container-fullbuild: %s\n' "$*" >&2; }
fail() { printf 'container-fullbuild: FAIL: %s\n' "$*" >&2; exit 1; }
pm() { "$CONTAINER_PODMAN" "$@"; }

[[ $GO_IMAGE == golang:* ]] || fail "no 'FROM golang:… AS build' line in the Dockerfile"
want_go="go${GO_IMAGE#golang:}"; want_go="${want_go%%-*}"
have_go="$(/usr/local/go/bin/go env GOVERSION 2>/dev/null || true)"
[[ $have_go == "$want_go" ]] || fail "the stand-in needs /usr/local/go at $want_go (the Dockerfile's $GO_IMAGE); found ${have_go:-none}"

# --- the stand-in for golang:…-bookworm ---------------------------------------
B="$W/base"
mkdir -p "$B"/{bin,etc/ssl/certs,tmp,usr/local,go}
cp /bin/dash "$B/bin/sh"
tools=(cp rm mkdir chmod cat)
for t in "${tools[@]}"; do cp "$(command -v "$t")" "$B/bin/"; done
for lib in $(ldd /bin/dash "${tools[@]/#//bin/}" | grep -o '/[^ ]*\.so[^ ]*' | sort -u); do
  mkdir -p "$B$(dirname "$lib")" && cp -L "$lib" "$B$lib"
done
cp /etc/ssl/certs/ca-certificates.crt "$B/etc/ssl/certs/"
chmod 1777 "$B/tmp"
cp -al /usr/local/go "$B/usr/local/go" 2>/dev/null || cp -a /usr/local/go "$B/usr/local/go"
cat >"$W/Golang.Containerfile" <<EOF
FROM scratch
COPY . /
ENV GOLANG_VERSION=${want_go#go} GOTOOLCHAIN=local GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go
EOF
say "building a stand-in for $GO_IMAGE (host $have_go, dash, coreutils)"
pm build -q -f "$W/Golang.Containerfile" -t "docker.io/library/$GO_IMAGE" "$B" >"$W/base.log" 2>&1 ||
  { cat "$W/base.log" >&2; fail "building the stand-in"; }

# --- the Dockerfile, unchanged --------------------------------------------------
say "building the whole Dockerfile (go mod download, go build inside)"
pm build --network host --format docker --build-arg "VERSION=$CONTAINER_VERSION" \
  -f "$ROOT/Dockerfile" -t localhost/proxmox-safe-mcp:full "$ROOT" >"$W/build.log" 2>&1 ||
  { tail -n 30 "$W/build.log" >&2; fail "podman build of the whole Dockerfile"; }

pm create --name psm-fullbuild-$$ localhost/proxmox-safe-mcp:full >/dev/null 2>&1
mkdir -p "$W/image"
pm export psm-fullbuild-$$ >"$W/image.tar"
pm rm psm-fullbuild-$$ >/dev/null 2>&1
tar -tvf "$W/image.tar" --numeric-owner | awk '{print $1, $2, $NF}' | sed 's#/$##' |
  grep -vE ' (dev|proc|sys|run|etc/hosts|etc/hostname|etc/resolv.conf|\.)(/|$)' | sort >"$W/files"
diff -u "$CONTAINER_FILES" "$W/files" >&2 || fail "the whole Dockerfile's image has other files than CI's"
tar -xf "$W/image.tar" -C "$W/image" proxmox-safe-mcp
a="$(sha256sum <"$W/image/proxmox-safe-mcp" | cut -c1-64)"
b="$(sha256sum <"$CONTAINER_BINARY" | cut -c1-64)"
[[ $a == "$b" ]] || fail "the binaries differ: full build $a, CI $b"
say "same file list as CI's image; binary byte-identical (sha256 $a)"
