package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestNodeStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	res, err := e.client.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Node != "pve1" || res.Uptime != 3600 || res.CPUs != 8 || res.Memory.Total != 64<<30 || res.Memory.Used != 8<<30 {
		t.Errorf("result = %+v", res)
	}
	if res.LoadAvg != [3]float64{0.5, 0.25, 0.12} {
		t.Errorf("loadavg = %v (Proxmox sends strings; they must be parsed)", res.LoadAvg)
	}
	if res.Kernel != "6.17.2-1-pve" || !strings.HasPrefix(res.PVEVersion, "pve-manager/9.1.1") {
		t.Errorf("kernel %q, version %q", res.Kernel, res.PVEVersion)
	}
	if res.RootFS.Total != 100<<30 || res.RootFS.Used != 10<<30 {
		t.Errorf("rootfs = %+v", res.RootFS)
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"GET /nodes/pve1/status"}) {
		t.Errorf("requests = %v", got)
	}
}

func TestNodeStatusOfflineNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = append(c.Policy.AllowedNodes, "pve3") })
	_, err := e.client.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve3"})
	var ae *proxmoxsafe.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 595 {
		t.Fatalf("err = %v, want a 595 APIError", err)
	}
}
