# proxmox-safe-mcp over streamable HTTP: a static binary in an image FROM
# scratch (no shell, no package manager, no curl), as uid 65532.
#
#   docker build -t proxmox-safe-mcp .            (--build-arg VERSION=v1.2.3)
#   docker compose up -d                          (see docker-compose.yml)
#
# This file is the source of truth for the image. What the image contains
# is assembled by deploy/container/rootfs.sh; this file says how it runs.
# ci/container.sh builds this same final stage without a registry (no
# golang image can be pulled there): it runs rootfs.sh on the host and
# replaces the "build" stage with `--build-context build=DIR`. Keep every
# file of the final stage coming from /out of the build stage, or CI and
# `docker build` stop building the same image. docs/DEPLOYMENT.md explains.

# Build stage: the binary, the CA bundle, the directories (rootfs.sh).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN VERSION="${VERSION}" sh deploy/container/rootfs.sh /out

# Runtime: only what rootfs.sh put in /out.
FROM scratch
COPY --from=build /out/rootfs/ /
# /data holds the audit log when mutations are enabled; owned by the
# runtime user so a volume mounted there is writable.
COPY --from=build --chown=65532:65532 /out/data/ /data/
# Not root. 65532 is distroless's "nonroot", the uid earlier releases used
# (docker-compose.yml's instructions chown the secret files to it).
USER 65532:65532
# Inside a container the server must listen on all interfaces to be reached
# through a published port. That is a non-loopback bind, so the binary
# refuses to start without MCP_AUTH_TOKEN or MCP_AUTH_TOKEN_FILE (set by
# docker-compose.yml). Publish the port on 127.0.0.1 only.
# MCP_IMAGE_HTTP_ADDR is the lowest-priority default: a deployment's own
# MCP_HTTP_ADDR, or another server's MCP_TRANSPORT/MCP_HOST/MCP_PORT,
# override it without conflict (MCP_PORT=3000 alone listens on
# 0.0.0.0:3000; MCP_TRANSPORT=stdio serves stdio).
ENV MCP_IMAGE_HTTP_ADDR=0.0.0.0:8000
# A published port changes the address clients use: accept the Host they
# send for 127.0.0.1/localhost (any port), as `docker run -p
# 127.0.0.1:8000:8000` needs. A DNS-rebinding page sends its own name, not
# these; anything else still gets 403. Behind a proxy, set its name here.
ENV MCP_ALLOWED_HOSTS=127.0.0.1,localhost
EXPOSE 8000
# The binary probes its own /healthz: there is no curl in this image.
# "healthcheck" derives the URL from MCP_HTTP_ADDR, MCP_HOST/MCP_PORT or
# MCP_IMAGE_HTTP_ADDR (0.0.0.0 → 127.0.0.1).
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/proxmox-safe-mcp", "healthcheck"]
# SIGTERM: stop accepting, let calls in flight finish (MCP_SHUTDOWN_TIMEOUT,
# default 20s), exit 0. Give `docker stop` more than that (-t 30).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/proxmox-safe-mcp"]
