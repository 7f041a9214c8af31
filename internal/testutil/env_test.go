package testutil

import (
	"slices"
	"testing"
)

func TestLookupEnv(t *testing.T) {
	t.Parallel()
	lookup := LookupEnv("A", "1", "EMPTY", "", "ODD")
	if v, ok := lookup("A"); !ok || v != "1" {
		t.Errorf("A = %q, %v; want 1, true", v, ok)
	}
	if v, ok := lookup("EMPTY"); !ok || v != "" {
		t.Errorf("EMPTY = %q, %v; want set and empty", v, ok)
	}
	for _, k := range []string{"ODD", "B"} {
		if _, ok := lookup(k); ok {
			t.Errorf("%s is set, want it unset (a name without a value is dropped)", k)
		}
	}
}

func TestReadOnlyEnv(t *testing.T) {
	t.Parallel()
	got := ReadOnlyEnv("PROXMOX_SAFE_READ_ONLY", "false", "PVE_NODES", "pve1")
	if len(got) != len(readOnlyEnv)+2 || got[len(got)-2] != "PVE_NODES" || got[len(got)-1] != "pve1" {
		t.Errorf("ReadOnlyEnv = %q, want PVE_NODES appended", got)
	}
	if v, _ := LookupEnv(got...)("PROXMOX_SAFE_READ_ONLY"); v != "false" {
		t.Errorf("PROXMOX_SAFE_READ_ONLY = %q, want the value set over it", v)
	}
	// A name that equals a value already there is a new name, not that value.
	got = ReadOnlyEnv("true", "x")
	if v, _ := LookupEnv(got...)("PROXMOX_SAFE_READ_ONLY"); v != "true" || len(got) != len(readOnlyEnv)+2 {
		t.Errorf("ReadOnlyEnv = %q, want \"true\" appended as a name", got)
	}
	if got = ReadOnlyEnv(); !slices.Equal(got, readOnlyEnv) {
		t.Errorf("ReadOnlyEnv() = %q, want the environment itself", got)
	}
	got[1] = "changed"
	if readOnlyEnv[1] == "changed" {
		t.Error("ReadOnlyEnv returned the shared slice, not a copy")
	}
}
