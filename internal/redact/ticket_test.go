package redact

import "testing"

// TestHoldsTicket: a ticket anywhere in a value, plain or URL-encoded,
// and nothing that only resembles one.
func TestHoldsTicket(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"PVE:root@pam:6A1B2C3D::c2ln",
		"PVEVNC:6A1B2C3D::c2ln",
		"cookie: PVEAuthCookie=PVE:root@pam:6A1B2C3D::c2ln",
		"x PVE:root@pam:6A1B2C3D::c2ln",
		"xPVE:u@pve:6A1B2C3D::",
		"PVEAuthCookie=PVE%3Aroot%40pam%3A6A1B2C3D%3A%3Ac2ln",
		"t=PVE%3au%40pve%3a6a1b2c3d%3a%3a",
	} {
		if !HoldsTicket(s) {
			t.Errorf("HoldsTicket(%q) = false, want true", s)
		}
	}
	for _, s := range []string{
		"PVE 8.4", "upgraded to PVE:8.4 at 6A1B2C3D", "PVEAuthCookie is set at login", "PVE:root@pam:6A1B2C3D:c2ln",
		"pve:root@pam:6A1B2C3D::c2ln", "PVE:root@pam:6A1B2C3::", "PVE:root pam:6A1B2C3D::",
	} {
		if HoldsTicket(s) {
			t.Errorf("HoldsTicket(%q) = true, want false", s)
		}
	}
}
