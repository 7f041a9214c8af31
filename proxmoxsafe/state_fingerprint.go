package proxmoxsafe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Fingerprint digests the parts of the state a person approving an action
// is shown: status, QEMU status, name, lock, template and HA state. It
// leaves out the uptime, which moves every second. Approvals that take
// time (a grant, an MCP elicitation) bind it, so an answer given for one
// state does not approve the action once the guest has changed. The result
// is 32 lowercase hex digits (the first 16 bytes of a SHA-256); equal
// states give equal fingerprints across processes and versions of this
// module that keep the same fields.
func (s GuestState) Fingerprint() string {
	raw, _ := json.Marshal([]any{s.Status, s.QMPStatus, s.Name, s.Lock, s.Template, s.HAManaged, s.HAState})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}

// Summary names the parts of the state an approval depends on, as a
// refusal and a grant's plan show them: "running (paused), locked
// (backup), template, HA-managed (started)", each part only when it
// applies.
func (s GuestState) Summary() string {
	out := s.Status
	if s.QMPStatus != "" && s.QMPStatus != s.Status {
		out += " (" + s.QMPStatus + ")"
	}
	if s.Lock != "" {
		out += ", locked (" + s.Lock + ")"
	}
	if s.Template {
		out += ", template"
	}
	if s.HAManaged {
		out += ", HA-managed (" + s.HAState + ")"
	}
	return out
}
