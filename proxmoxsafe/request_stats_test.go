package proxmoxsafe_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestOnRequest: every request to Proxmox is reported with its method and
// status, an upstream error with its status; never refused when it left.
func TestOnRequest(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	var mu sync.Mutex
	var got []proxmoxsafe.RequestStats
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(), Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}},
		OnRequest: func(s proxmoxsafe.RequestStats) {
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ClusterStatus(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != len(fake.Requests()) || len(got) == 0 {
		t.Errorf("%d reported, %d sent", len(got), len(fake.Requests()))
	}
	for _, s := range got {
		if s.Method != http.MethodGet || s.Status != http.StatusOK || s.Refused || s.Duration <= 0 {
			t.Errorf("cluster status request: %+v", s)
		}
	}
	got = nil
	mu.Unlock()
	fake.InjectFault(proxmoxtest.Fault{Path: "/nodes/pve1/status", Status: http.StatusInternalServerError})
	if _, err := c.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"}); err == nil {
		t.Fatal("no error for a 500")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Status != http.StatusInternalServerError || got[0].Refused {
		t.Errorf("after a 500: %+v", got)
	}
}
