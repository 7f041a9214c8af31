# proxmox-safe-mcp over streamable HTTP, in a distroless image.
#
#   docker build -t proxmox-safe-mcp .
#   docker compose up            (see docker-compose.yml and docs/DEPLOYMENT.md)
#
# Build stage: a static binary (CGO_ENABLED=0), reproducible paths
# (-trimpath), version stamped with --build-arg VERSION=v1.2.3.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/proxmox-safe-mcp ./cmd/proxmox-safe-mcp \
 && mkdir -p /out/data
# Runtime: distroless static (no shell, no package manager, no curl), as the
# image's unprivileged "nonroot" user (uid/gid 65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/proxmox-safe-mcp /proxmox-safe-mcp
# /data holds the audit log when mutations are enabled; owned by nonroot so
# a named volume mounted there is writable.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# Inside a container the server must listen on all interfaces to be reached
# through a published port. That is a non-loopback bind, so the binary
# refuses to start without MCP_AUTH_TOKEN or MCP_AUTH_TOKEN_FILE (set by
# docker-compose.yml). Publish the port on 127.0.0.1 only.
ENV MCP_HTTP_ADDR=0.0.0.0:8000
EXPOSE 8000
# The binary probes its own /healthz: there is no curl in this image.
# "healthcheck" derives the URL from MCP_HTTP_ADDR (0.0.0.0 → 127.0.0.1).
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/proxmox-safe-mcp", "healthcheck"]
# SIGTERM: stop accepting, let calls in flight finish (MCP_SHUTDOWN_TIMEOUT,
# default 20s), exit 0. Give `docker stop` more than that (-t 30).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/proxmox-safe-mcp"]
