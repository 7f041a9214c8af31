package proxmoxsafe_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestGuestStateFingerprint: every part of the state an approver is shown
// changes the fingerprint (grants and elicitations both bind it), the
// uptime does not, and the format stays 32 hex digits.
func TestGuestStateFingerprint(t *testing.T) {
	t.Parallel()
	base := proxmoxsafe.GuestState{Status: "running", QMPStatus: "running", Name: "web1", HAState: "started", HAManaged: true, Uptime: time.Hour}
	fp := base.Fingerprint()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(fp) {
		t.Fatalf("fingerprint %q is not 32 lowercase hex digits", fp)
	}
	for name, change := range map[string]func(*proxmoxsafe.GuestState){
		"status":     func(s *proxmoxsafe.GuestState) { s.Status = "stopped" },
		"qmpstatus":  func(s *proxmoxsafe.GuestState) { s.QMPStatus = "paused" },
		"name":       func(s *proxmoxsafe.GuestState) { s.Name = "web2" },
		"lock":       func(s *proxmoxsafe.GuestState) { s.Lock = "backup" },
		"template":   func(s *proxmoxsafe.GuestState) { s.Template = true },
		"ha managed": func(s *proxmoxsafe.GuestState) { s.HAManaged = false },
		"ha state":   func(s *proxmoxsafe.GuestState) { s.HAState = "stopped" },
	} {
		s := base
		change(&s)
		if s.Fingerprint() == fp {
			t.Errorf("%s changed but the fingerprint did not", name)
		}
	}
	s := base
	s.Uptime += time.Minute
	if s.Fingerprint() != fp {
		t.Error("the uptime changed the fingerprint; it moves every second and is not shown")
	}
	// Field boundaries count: moving text from one field to the next is
	// another state.
	a := proxmoxsafe.GuestState{Name: "ab", Lock: ""}
	b := proxmoxsafe.GuestState{Name: "a", Lock: "b"}
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("name|lock boundary is not part of the fingerprint")
	}
}
