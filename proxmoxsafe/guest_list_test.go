package proxmoxsafe_test

import (
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestListGuests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	res, err := e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 10 || len(res.Guests) != 10 || res.NextCursor != "" {
		t.Fatalf("total %d, page %d, cursor %q", res.Total, len(res.Guests), res.NextCursor)
	}
	if !slices.IsSortedFunc(res.Guests, func(a, b proxmoxsafe.Guest) int { return a.VMID - b.VMID }) {
		t.Error("guests not ordered by vmid")
	}
	byID := map[int]proxmoxsafe.Guest{}
	for _, g := range res.Guests {
		byID[g.VMID] = g
	}
	web := byID[100]
	if web.Name != "web1" || web.Node != "pve1" || web.Type != proxmoxsafe.TypeQEMU || web.Status != "running" || !slices.Equal(web.Tags, []string{"prod", "web"}) || !web.Manageable {
		t.Errorf("guest 100 = %+v", web)
	}
	if g := byID[103]; !g.Template {
		t.Errorf("guest 103 should be a template: %+v", g)
	}
	if g := byID[104]; g.Lock != "backup" {
		t.Errorf("guest 104 lock = %q", g.Lock)
	}
	if g := byID[105]; g.HAState != "started" {
		t.Errorf("guest 105 hastate = %q", g.HAState)
	}
	if g := byID[200]; g.Type != proxmoxsafe.TypeLXC {
		t.Errorf("guest 200 type = %q", g.Type)
	}
	// Manageable follows the policy: not on pve3 (not allowlisted), not 106 (protected).
	for id, want := range map[int]bool{100: true, 105: true, 106: false, 300: false} {
		if byID[id].Manageable != want {
			t.Errorf("guest %d manageable = %v, want %v", id, byID[id].Manageable, want)
		}
	}
	if g := byID[300]; g.Status != "unknown" {
		t.Errorf("guest on offline node: status %q, want unknown", g.Status)
	}
	reqs := e.requests()
	if len(reqs) != 1 || reqLine(reqs[0]) != "GET /cluster/resources" || reqs[0].Query.Get("type") != "vm" {
		t.Errorf("requests = %v", reqs)
	}
}

func TestListGuestsFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	tests := []struct {
		name string
		in   proxmoxsafe.ListGuestsInput
		want []int
	}{
		{"node", proxmoxsafe.ListGuestsInput{Node: "pve2"}, []int{105, 201}},
		{"type", proxmoxsafe.ListGuestsInput{Type: proxmoxsafe.TypeLXC}, []int{200, 201}},
		{"status", proxmoxsafe.ListGuestsInput{Status: "stopped"}, []int{101, 103, 201}},
		{"tag", proxmoxsafe.ListGuestsInput{Tag: "WEB"}, []int{100, 200}},
		{"name", proxmoxsafe.ListGuestsInput{Name: "DB"}, []int{101}},
		{"combined", proxmoxsafe.ListGuestsInput{Tag: "prod", Status: "running"}, []int{100}},
		{"nothing", proxmoxsafe.ListGuestsInput{Name: "nope"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.client.ListGuests(t.Context(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, g := range res.Guests {
				got = append(got, g.VMID)
			}
			if !slices.Equal(got, tc.want) || res.Total != len(tc.want) {
				t.Errorf("got %v (total %d), want %v", got, res.Total, tc.want)
			}
		})
	}
}

func TestListGuestsPaging(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, proxmoxtest.GenerateCluster(3, 250, 7), nil)
	seen := map[int]bool{}
	cursor := ""
	pages := 0
	last := 0
	for {
		res, err := e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if res.Total != 750 {
			t.Fatalf("total = %d", res.Total)
		}
		for _, g := range res.Guests {
			if g.VMID <= last || seen[g.VMID] {
				t.Fatalf("vmid %d out of order or repeated", g.VMID)
			}
			seen[g.VMID], last = true, g.VMID
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if pages != 8 || len(seen) != 750 {
		t.Errorf("pages %d, guests %d", pages, len(seen))
	}
	// The default limit is 200.
	res, err := e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{})
	if err != nil || len(res.Guests) != proxmoxsafe.DefaultListLimit || res.NextCursor == "" {
		t.Errorf("default page: %d guests, cursor %q, err %v", len(res.Guests), res.NextCursor, err)
	}
}

func TestListGuestsToleratesOldTypes(t *testing.T) {
	t.Parallel()
	c := testCluster()
	c.Version = "7.4.16" // LXC lists send vmid as a string before 8.x
	e := newEnvWith(t, c, nil)
	res, err := e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{Type: proxmoxsafe.TypeLXC})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2 || res.Guests[0].VMID != 200 {
		t.Errorf("result = %+v", res)
	}
}

func TestListGuestsSanitizesNames(t *testing.T) {
	t.Parallel()
	c := testCluster()
	c.Guests[0].Name = "web\u200b1\u202e\x1b[31m\x07"
	e := newEnvWith(t, c, nil)
	res, err := e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Guests[0].Name != "web1" {
		t.Errorf("name = %q, want the sanitized %q", res.Guests[0].Name, "web1")
	}
}

func TestListGuestsProtected(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ProtectedGuests = []int{106} })
	res, err := e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var protected []int
	for _, g := range res.Guests {
		if g.Protected {
			protected = append(protected, g.VMID)
			if g.Manageable {
				t.Errorf("protected guest %d is manageable", g.VMID)
			}
		}
	}
	if want := []int{101, 102, 103, 106, 201}; !slices.Equal(protected, want) {
		t.Errorf("protected = %v, want %v", protected, want)
	}
}
