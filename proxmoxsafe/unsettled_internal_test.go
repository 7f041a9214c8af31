package proxmoxsafe

import (
	"errors"
	"strings"
	"testing"
)

// TestMayHaveRun: the advice to check before retrying is added exactly
// when a mutating request may have been carried out: a proxy's
// forwarding statuses; never to a plain answer of Proxmox or a failure
// before sending. The result still matches what the error matched.
func TestMayHaveRun(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err    error
		advice bool
	}{
		{&APIError{StatusCode: 502, Message: "Bad Gateway"}, true},
		{&APIError{StatusCode: 504, Message: "Gateway Timeout"}, true},
		{&APIError{StatusCode: 597, Message: "whatever"}, true},
		{&APIError{StatusCode: 599, Message: "Too many redirections"}, true},
		{&APIError{StatusCode: 500, Message: "VM 100 not running"}, false},
		{&APIError{StatusCode: 403, Message: "Permission check failed"}, false},
		{&APIError{StatusCode: 595, Message: "No route to host"}, false},
		{errors.New("dial tcp: connection refused"), false},
	} {
		got := mayHaveRun(tt.err)
		if has := strings.Contains(got.Error(), unsettledAdvice); has != tt.advice {
			t.Errorf("mayHaveRun(%v) = %q; advice %v, want %v", tt.err, got, has, tt.advice)
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("mayHaveRun(%v) no longer matches it", tt.err)
		}
	}
}

func TestAcceptedWithoutReceipt(t *testing.T) {
	t.Parallel()
	cause := errors.New("no UPID in the answer")
	err := acceptedWithoutReceipt("/nodes/pve1/qemu/100/status/stop", cause)
	if !errors.Is(err, cause) || !strings.HasPrefix(err.Error(), "POST /nodes/pve1/qemu/100/status/stop: no UPID") || !strings.HasSuffix(err.Error(), unsettledAdvice) {
		t.Errorf("acceptedWithoutReceipt = %q", err)
	}
}
