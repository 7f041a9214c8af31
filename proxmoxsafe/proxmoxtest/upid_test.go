package proxmoxtest

import (
	"strings"
	"testing"
)

func TestUPIDFormat(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	upid := upidOf(t, post(t, s, "/nodes/pve2/qemu/103/status/start", nil))
	m := upidFACTS.FindStringSubmatch(upid)
	if m[1] != "pve2" || m[6] != "qmstart" || m[7] != "103" || m[8] != DefaultTokenID {
		t.Errorf("UPID parts = %q", m[1:])
	}
	for _, hex := range m[3:6] {
		if hex != strings.ToUpper(hex) || len(hex) != 8 {
			t.Errorf("hex field %q is not 8 upper-case digits", hex)
		}
	}
	st := taskStatus(t, s, "pve2", upid)
	if st["user"] != "automation@pve" || st["tokenid"] != "mcp" || st["upid"] != upid || st["node"] != "pve2" || st["id"] != "103" {
		t.Errorf("token task status = %v", st)
	}
}
