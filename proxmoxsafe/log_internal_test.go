package proxmoxsafe

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLoggedLevels: one line per operation with its op and the guest; a
// success at debug, a refusal (an expected outcome) at info with
// "refused", any other error at warn with "error"; err comes back as is.
func TestLoggedLevels(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := &Client{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	tg := Target{Node: "pve1", Type: TypeQEMU, VMID: 100}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, "level=DEBUG"},
		{refuse(ErrPrecondition, "guest is locked"), `level=INFO msg="proxmox operation" node=pve1 type=qemu vmid=100 op=GuestPower`},
		{&ApprovalError{Required: "APPROVE stop pve1/qemu/100"}, "level=INFO"},
		{refuse(ErrNotAllowed, "class off"), "refused="},
		{errors.New("connection reset"), `error="connection reset"`},
	} {
		buf.Reset()
		if got := c.logged(t.Context(), OpGuestPower, time.Now(), tt.err, guestAttrs(tg)...); got != tt.err {
			t.Errorf("logged returned %v, want %v", got, tt.err)
		}
		out := buf.String()
		if strings.Count(out, "\n") != 1 || !strings.Contains(out, tt.want) || !strings.Contains(out, "op=GuestPower") {
			t.Errorf("err %v logged %q, want one line with %q", tt.err, out, tt.want)
		}
	}
	if buf.Reset(); !strings.Contains(c.logged(t.Context(), OpGuestPower, time.Now(), errors.New("x"), nodeAttr("pve2")).Error(), "x") || !strings.Contains(buf.String(), "node=pve2 ") {
		t.Errorf("nodeAttr: %q", buf.String())
	}
}
