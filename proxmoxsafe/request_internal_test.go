package proxmoxsafe

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// TestUpstreamErr: a Proxmox answer becomes an *APIError with its text
// sanitized and a 400's parameters spelled out in its message; the
// guard's refusal stays itself; anything else is ErrUpstream and still
// matches what it matched (a context deadline).
func TestUpstreamErr(t *testing.T) {
	t.Parallel()
	c := &Client{}
	if c.upstreamErr(nil) != nil {
		t.Error("upstreamErr(nil) is an error")
	}
	var ae *APIError
	err := c.upstreamErr(&pve.Error{Method: "POST", Path: "/nodes/pve1/qemu/100/snapshot", StatusCode: 400,
		Params: map[string]string{"snapname": "value may only be 40 characters long", "b\x1bad": "x"}})
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Method != "POST" {
		t.Fatalf("err = %#v, want an *APIError", err)
	}
	if !strings.HasPrefix(ae.Message, "Parameter verification failed: ") || !strings.Contains(ae.Message, "snapname: value may only be 40 characters long") {
		t.Errorf("message = %q", ae.Message)
	}
	for k := range ae.Params {
		if strings.Contains(k, "\x1b") {
			t.Errorf("parameter name %q kept a control character", k)
		}
	}
	re := refuse(ErrNotAllowed, "not on the allowlist")
	if got := c.upstreamErr(re); got != error(re) {
		t.Errorf("the guard's refusal became %v", got)
	}
	got := c.upstreamErr(context.DeadlineExceeded)
	if !errors.Is(got, ErrUpstream) || !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("a deadline became %v", got)
	}
}

func TestFormatParams(t *testing.T) {
	t.Parallel()
	if got := formatParams(map[string]string{"vmid": "invalid", "node": "unknown"}); got != "node: unknown; vmid: invalid" {
		t.Errorf("formatParams = %q", got)
	}
	if got := formatParams(nil); got != "" {
		t.Errorf("formatParams(nil) = %q", got)
	}
}
