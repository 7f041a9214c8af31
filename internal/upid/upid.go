// Package upid parses and formats Proxmox task identifiers (UPIDs).
//
// A UPID comes back from Proxmox after every mutation and is later sent back
// in a URL path to poll the task, so it is untrusted input twice over: it
// must match Proxmox's own grammar exactly before it is shown to a model or
// put in a request.
package upid

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// MaxLen is the longest UPID accepted, in bytes. Proxmox names each task's
// log file after its UPID (/var/log/pve/tasks/<x>/<UPID>), and file names are
// at most 255 bytes, so no real task can have a longer one.
const MaxLen = 255

// ErrInvalid is matched by every error Parse returns.
var ErrInvalid = errors.New("invalid UPID")

// Pattern is the decode regex of Proxmox's PVE::Tools/UPID.pm, unchanged:
// hex in either case, pstart of 8 or 9 digits (9 after ~497 days of uptime),
// an id that may be empty. Parse also refuses what Proxmox itself could not
// have produced (see Parse).
const Pattern = `^UPID:([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s/]+):([^:\s/]*):([^:\s/]+):$`

var pattern = lazyre.New(Pattern)

// UPID is a parsed task identifier.
type UPID struct {
	// Node is the node that runs the task.
	Node string
	// PID is the worker's process id on Node.
	PID int
	// PStart is the worker's start time in clock ticks since boot; with PID
	// it tells a running task from a reused pid.
	PStart int64
	// StartTime is when the task started, in UTC, to the second.
	StartTime time.Time
	// Type is the task type, e.g. "qmstart" or "vzsnapshot".
	Type string
	// ID is the task's object, usually a VMID; it may be empty (bulk
	// actions) or contain '@' (e.g. "101@local-lvm").
	ID string
	// User started the task: "user@realm" or an API token "user@realm!token".
	User string
}

// Parse parses s as a UPID. Besides Proxmox's regex it rejects what Proxmox
// itself could not have produced: UPIDs longer than [MaxLen], invalid UTF-8,
// and control, white space (Unicode, as Perl's \s matches it) or invisible
// characters anywhere. The error matches [ErrInvalid] and quotes at most 100
// bytes of s.
func Parse(s string) (UPID, error) {
	if len(s) > MaxLen {
		return UPID{}, invalid(s, fmt.Sprintf("longer than %d bytes", MaxLen))
	}
	if !sanitize.Clean(s) || strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return UPID{}, invalid(s, "contains white space, control or invisible characters")
	}
	m := pattern.FindStringSubmatch(s)
	if m == nil {
		return UPID{}, invalid(s, "want UPID:node:pid:pstart:starttime:type:id:user:")
	}
	// The regex bounds every number to 9 hex digits, so parsing cannot fail
	// or overflow int64.
	pid, _ := strconv.ParseInt(m[3], 16, 64)
	pstart, _ := strconv.ParseInt(m[4], 16, 64)
	start, _ := strconv.ParseInt(m[5], 16, 64)
	return UPID{
		Node:      m[1],
		PID:       int(pid),
		PStart:    pstart,
		StartTime: time.Unix(start, 0).UTC(),
		Type:      m[6],
		ID:        m[7],
		User:      m[8],
	}, nil
}

// Valid reports whether Parse would accept s.
func Valid(s string) bool {
	_, err := Parse(s)
	return err == nil
}

// String encodes u the way Proxmox does (upper-case hex, numbers padded to
// 8 digits, trailing colon), so a UPID read in lower case is sent back in
// the form Proxmox itself writes. It is only a valid UPID if u's fields are:
// one from Parse always round-trips.
func (u UPID) String() string {
	return fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", u.Node, u.PID, u.PStart, u.StartTime.Unix(), u.Type, u.ID, u.User)
}

// maxEcho bounds how much of a rejected input an error repeats, so that a
// hostile upstream cannot push a large payload through error messages.
const maxEcho = 100

func invalid(s, why string) error {
	more := ""
	if len(s) > maxEcho {
		s, more = s[:maxEcho], "…"
	}
	return fmt.Errorf("%w %q%s: %s", ErrInvalid, s, more, why)
}
