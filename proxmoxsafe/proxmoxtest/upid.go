package proxmoxtest

import (
	"fmt"
	"strconv"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// upidRE is the decode regex of pve-common UPID.pm: pstart may have 8 or 9
// hex digits, the id may be empty, the user may be a token id.
var upidRE = lazyre.New(`^UPID:([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s/]+):([^:\s/]*):([^:\s/]+):$`)

// upidParts is a decoded UPID.
type upidParts struct {
	node          string
	pid, pstart   uint64
	starttime     int64
	typ, id, user string
}

// encodeUPID formats a UPID exactly like UPID.pm encode: upper-case hex,
// 8 digits, trailing colon.
func encodeUPID(p upidParts) string {
	return fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%s:%s:", p.node, p.pid, p.pstart, p.starttime, p.typ, p.id, p.user)
}

// decodeUPID parses a UPID; ok is false for anything PVE would reject with
// "unable to parse worker upid".
func decodeUPID(s string) (upidParts, bool) {
	m := upidRE.FindStringSubmatch(s)
	if m == nil {
		return upidParts{}, false
	}
	pid, _ := strconv.ParseUint(m[3], 16, 64)
	pstart, _ := strconv.ParseUint(m[4], 16, 64)
	st, _ := strconv.ParseInt(m[5], 16, 64)
	return upidParts{node: m[1], pid: pid, pstart: pstart, starttime: st, typ: m[6], id: m[7], user: m[8]}, true
}
