package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/promtext"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// metrics are the Prometheus figures --metrics-addr serves. Labels are
// only ever values from small fixed sets (tool names this version
// declares, outcomes, refusal kinds, methods, status classes, the names a
// clusters file configures), never argument values, guest names or paths
// (docs/CONFIGURATION.md). With a clusters file the per-cluster series
// (tool calls, refusals, requests to Proxmox) have a cluster label, the
// cluster the call or the request was for; without one they have none,
// as before. Why
// they are written by internal/promtext and not a metrics library: its
// package comment.
type metrics struct {
	set *promtext.Set
	ln  net.Listener
	srv *http.Server
}

// newMetrics listens on addr; serving starts with serve.
func newMetrics(addr string) (*metrics, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m := &metrics{set: promtext.NewSet(), ln: ln}
	started := float64(time.Now().Unix())
	m.set.Gauge("process_start_time_seconds", "Start time of the process since the Unix epoch in seconds.", "", func() float64 { return started })
	m.set.Gauge("go_goroutines", "Number of goroutines that currently exist.", "", func() float64 { return float64(runtime.NumGoroutine()) })
	// runtime.MemStats' HeapAlloc is runtime/metrics'
	// /memory/classes/heap/objects:bytes; that package is not linked
	// because its initialization (a table of every metric's description)
	// costs every start about 1.2 million instructions, for one gauge of a
	// listener most servers never open.
	m.set.Gauge("go_heap_objects_bytes", "Memory occupied by live objects and dead objects not yet freed.", "", func() float64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.set.Write(w)
	})
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return m, nil
}

// url is where the metrics are served.
func (m *metrics) url() string { return "http://" + m.ln.Addr().String() + "/metrics" }

// serve answers scrapes until close.
func (m *metrics) serve(log *slog.Logger) {
	log.Info("serving Prometheus metrics", slog.String("url", m.url()))
	go func() {
		if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener failed", slog.Any("error", err))
		}
	}()
}

func (m *metrics) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = m.srv.Shutdown(ctx)
}

// toolCall counts one tools/call.
func (m *metrics) toolCall(c mcpserver.ToolCall) {
	m.set.Counter("proxmox_safe_tool_calls_total", "MCP tool calls by tool and outcome (ok, refused, error); with a clusters file, by cluster (* for a read across several).", withCluster(c.Cluster, "tool", c.Tool, "outcome", c.Outcome)).Add(1)
	if c.Outcome == mcpserver.OutcomeRefused {
		m.set.Counter("proxmox_safe_refusals_total", "Refused tool calls by the refusal's kind; nothing was done.", withCluster(c.Cluster, "kind", c.Kind)).Add(1)
	}
	m.set.Histogram("proxmox_safe_tool_call_duration_seconds", "How long tool calls took, by tool.", withCluster(c.Cluster, "tool", c.Tool)).Observe(c.Duration.Seconds())
}

// withCluster is promtext.Labels of kv and, when there is one, the
// cluster: none without a clusters file, nor for a call that named no
// configured cluster.
func withCluster(cluster string, kv ...string) string {
	if cluster != "" {
		kv = append(kv, "cluster", cluster)
	}
	return promtext.Labels(kv...)
}

// upstream counts one request to Proxmox, sent to cluster (a clusters
// file's name; "" without one).
func (m *metrics) upstream(cluster string, s proxmoxsafe.RequestStats) {
	status := "error"
	switch {
	case s.Refused:
		status = "refused"
	case s.Status > 0:
		status = strconv.Itoa(s.Status/100) + "xx"
	}
	m.set.Counter("proxmox_safe_upstream_requests_total", "Requests to Proxmox by method and status class (2xx, 4xx, 5xx; error: no response; refused: stopped by the transport guard, never sent); with a clusters file, by cluster.", withCluster(cluster, "method", s.Method, "status", status)).Add(1)
	if !s.Refused {
		m.set.Histogram("proxmox_safe_upstream_request_duration_seconds", "Latency of requests to Proxmox (to the response's headers), by method.", withCluster(cluster, "method", s.Method)).Observe(s.Duration.Seconds())
	}
}

// instrument counts srv's tool calls, for the clusters of clients, and
// sessions.
func (m *metrics) instrument(srv *mcp.Server, clients []*proxmoxsafe.Client) {
	srv.AddReceivingMiddleware(mcpserver.FleetObserveMiddleware(clients, m.toolCall))
	m.set.Gauge("proxmox_safe_mcp_sessions", "Open MCP sessions.", "", func() float64 {
		n := 0
		for range srv.Sessions() {
			n++
		}
		return float64(n)
	})
}
