package routes

import (
	"strings"
	"testing"
)

// TestDeniedBy: scope, wildcards, alternatives, "**" and case.
func TestDeniedBy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, path string
		want         string // the pattern, "" for none
	}{
		{"PUT", "/access/acl", "/access/**"},
		{"POST", "/access", "/access/**"},
		{"GET", "/access/acl", ""},
		{"GET", "/access/ticket", "/access/ticket"},
		{"HEAD", "/nodes/pve1/status", ""},
		{"POST", "/nodes/pve1/status", "/nodes/*/status"},
		{"GET", "/NODES/pve1/QEMU/100/Agent/Exec", "/nodes/*/qemu/*/agent/exec|exec-status|file-read|file-write|set-user-password"},
		{"GET", "/nodes/pve1/lxc/100/termproxy", "/nodes/*/qemu|lxc/*/vncproxy|termproxy|spiceproxy|vncwebsocket|mtunnel|mtunnelwebsocket"},
		{"POST", "/nodes/pve1/qemu/100/agent", "/nodes/*/qemu/*/agent"},
		{"POST", "/nodes/pve1/qemu/100/agent/ping", ""},
		{"POST", "/nodes/pve1/status/x", ""},
		{"GET", "/nodes", ""},
	} {
		segs, _ := Segments(tc.path)
		got := ""
		if r := DeniedBy(tc.method, segs); r != nil {
			got = r.Pattern
		}
		if got != tc.want {
			t.Errorf("DeniedBy(%s %s) = %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

// TestDeniedByReturnsACopy: a caller cannot change the table through
// the rule it is given, nor through DenyRules.
func TestDeniedByReturnsACopy(t *testing.T) {
	t.Parallel()
	r := DeniedBy("PUT", []string{"access", "acl"})
	r.Pattern, r.Scope = "/nothing", DenyWrites
	DenyRules()[0].Pattern = "/nothing"
	if DeniedBy("PUT", []string{"access", "acl"}).Pattern != "/access/**" || denyTable[0].Pattern != "/access/**" {
		t.Error("the deny table changed through a returned rule")
	}
}

// TestDenyLines: one line per rule, in table order, with its methods.
func TestDenyLines(t *testing.T) {
	t.Parallel()
	lines := DenyLines()
	if len(lines) != len(denyTable) || len(DenyRules()) != len(denyTable) {
		t.Fatalf("%d lines, %d rules", len(lines), len(denyTable))
	}
	if lines[0] != "POST/PUT/DELETE /access/**: "+denyTable[0].Why || !strings.HasPrefix(lines[1], "ALL /access/ticket: ") {
		t.Errorf("lines start %q, %q", lines[0], lines[1])
	}
	for i, r := range denyTable {
		if !strings.HasPrefix(r.Pattern, "/") || r.Why == "" || (r.Scope != DenyWrites && r.Scope != DenyAll) {
			t.Errorf("rule %d (%+v) is malformed", i, r)
		}
	}
}
