package proxmoxtest

import (
	"slices"
	"testing"
)

// TestGuestIsACopy: Server.Guest returns a copy; changing it (or its
// snapshots) leaves the model alone, and Update is the way to change it.
func TestGuestIsACopy(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	g, ok := s.Guest(100)
	if !ok || len(g.Snapshots) != 2 {
		t.Fatalf("Guest(100) = %+v, %v", g, ok)
	}
	g.Status = "stopped"
	g.Snapshots[0].Name = "changed"
	g.Tags = append(g.Tags, "x")
	again, _ := s.Guest(100)
	if again.Status != "running" || again.Snapshots[0].Name != "pre-upgrade" || slices.Contains(again.Tags, "x") {
		t.Errorf("the copy's changes reached the model: %+v", again)
	}
	s.Update(func(c *Cluster) { c.guest(100).Status = "stopped" })
	if g, _ := s.Guest(100); g.Status != "stopped" {
		t.Error("Update did not change the model")
	}
	if _, ok := s.Guest(999); ok {
		t.Error("Guest(999) found a guest")
	}
}

// TestAllPrivilegesIsACopy: the Administrator role's privileges, which a
// caller may change without changing the next caller's.
func TestAllPrivilegesIsACopy(t *testing.T) {
	t.Parallel()
	a := AllPrivileges()
	if !slices.Contains(a, "VM.PowerMgmt") || !slices.Contains(a, "Sys.Audit") {
		t.Fatalf("AllPrivileges = %v", a)
	}
	a[0] = "Nothing"
	if AllPrivileges()[0] == "Nothing" {
		t.Error("AllPrivileges returned the shared slice")
	}
}
