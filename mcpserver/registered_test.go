package mcpserver

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestAddToolsTwicePanics: a second AddTools on one server (a second
// cluster's client) panics before it registers anything, instead of
// go-sdk silently binding every tool to the second client; another server
// takes the same tools.
func TestAddToolsTwicePanics(t *testing.T) {
	t.Parallel()
	fakeA, fakeB := proxmoxtest.NewServer(nil), proxmoxtest.NewServer(nil)
	t.Cleanup(fakeA.Close)
	t.Cleanup(fakeB.Close)
	a := newClient(t, fakeA, defaultPolicy(), "", newMemAudit(), slog.New(slog.DiscardHandler))
	b := newClient(t, fakeB, defaultPolicy(), "", newMemAudit(), slog.New(slog.DiscardHandler))
	server := mcp.NewServer(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	AddTools(server, a, nil)
	func() {
		defer func() {
			v := recover()
			if s, _ := v.(string); !strings.Contains(s, `"cluster_status" is already registered`) {
				t.Errorf("second AddTools: recovered %v, want a panic naming the repeated tool", v)
			}
		}()
		AddTools(server, b, nil)
	}()
	// The first client's tools are still the ones served.
	cs := connect(t, t.Context(), server, "")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolClusterStatus, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("cluster_status: %v %s", err, mustJSON(t, res))
	}
	if len(fakeA.Requests()) == 0 || len(fakeB.Requests()) != 0 {
		t.Errorf("requests: A %d, B %d; want the call on A only", len(fakeA.Requests()), len(fakeB.Requests()))
	}
	AddTools(mcp.NewServer(&mcp.Implementation{Name: "other", Version: "v1"}, nil), b, nil)
}

// TestNewThenAddToolsPanics: New registered the tools already.
func TestNewThenAddToolsPanics(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	client := newClient(t, fake, defaultPolicy(), "", newMemAudit(), slog.New(slog.DiscardHandler))
	server := New(client, nil)
	defer func() {
		if recover() == nil {
			t.Error("AddTools on a server New made: no panic")
		}
	}()
	AddTools(server, client, nil)
}
