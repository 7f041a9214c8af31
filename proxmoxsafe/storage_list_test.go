package proxmoxsafe_test

import (
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestListStorageNode(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, infraCluster(), nil)
	res, err := e.client.ListStorage(t.Context(), proxmoxsafe.ListStorageInput{Node: "pve1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"GET /nodes/pve1/storage"}) || len(e.requests()[0].Query) != 0 {
		t.Errorf("requests = %v %v", got, e.requests()[0].Query)
	}
	if res.Scope != "node" || res.Total != 3 || len(res.Storages) != 3 {
		t.Fatalf("result = %+v", res)
	}
	local := res.Storages[0]
	want := proxmoxsafe.StorageInfo{Storage: "local", Node: "pve1", Type: "dir", Content: []string{"backup", "iso", "vztmpl"},
		Enabled: true, Active: true, Used: 40 << 30, Total: 100 << 30, Avail: 60 << 30}
	if !equalStorage(local, want) {
		t.Errorf("local = %+v", local)
	}
	if nfs := res.Storages[1]; nfs.Storage != "nfs-backup" || !nfs.Shared {
		t.Errorf("nfs = %+v", nfs)
	}
	if old := res.Storages[2]; old.Enabled || old.Active || old.Total != 0 {
		t.Errorf("disabled = %+v", old)
	}
}

func equalStorage(a, b proxmoxsafe.StorageInfo) bool {
	return slices.Equal(a.Content, b.Content) && a.Storage == b.Storage && a.Node == b.Node && a.Type == b.Type &&
		a.Shared == b.Shared && a.Enabled == b.Enabled && a.Active == b.Active && a.Used == b.Used && a.Total == b.Total && a.Avail == b.Avail
}

func TestListStorageCluster(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, infraCluster(), nil)
	res, err := e.client.ListStorage(t.Context(), proxmoxsafe.ListStorageInput{})
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.requests()
	if len(reqs) != 1 || reqLine(reqs[0]) != "GET /cluster/resources" || reqs[0].Query.Get("type") != "storage" {
		t.Errorf("requests = %v", reqs)
	}
	// Two enabled storages on three nodes; pve3 (offline, not even
	// allowlisted) is reported too: cluster-wide reads are not node-filtered.
	if res.Scope != "cluster" || res.Total != 6 {
		t.Fatalf("result = %+v", res)
	}
	var pve3 []proxmoxsafe.StorageInfo
	for _, s := range res.Storages {
		if s.Node == "pve3" {
			pve3 = append(pve3, s)
		}
	}
	if len(pve3) != 2 || pve3[0].Active || pve3[0].Total != 0 {
		t.Errorf("offline node's storages = %+v", pve3)
	}
	if s := res.Storages[0]; s.Node != "pve1" || s.Storage != "local" || !s.Active || s.Avail != 60<<30 {
		t.Errorf("first = %+v", s)
	}
	res, err = e.client.ListStorage(t.Context(), proxmoxsafe.ListStorageInput{Limit: 2})
	if err != nil || len(res.Storages) != 2 || res.Total != 6 {
		t.Errorf("limit: %+v, %v", res, err)
	}
}
