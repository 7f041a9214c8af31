package proxmoxsafe

import (
	"net/http"
	"testing"
)

type refusingTransport struct{}

func (refusingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, refuse(ErrNotAllowed, "not a request the enabled policy allows (transport guard); it was not sent")
}

// TestObservedGuardRefusal: a request the transport guard stops is
// reported as refused, with no status.
func TestObservedGuardRefusal(t *testing.T) {
	t.Parallel()
	var got RequestStats
	req, _ := http.NewRequest(http.MethodPost, "https://pve:8006/api2/json/nodes/pve1/qemu/100/status/stop", nil)
	if _, err := (observed{next: refusingTransport{}, on: func(s RequestStats) { got = s }}).RoundTrip(req); err == nil {
		t.Fatal("no error")
	}
	if !got.Refused || got.Status != 0 || got.Method != http.MethodPost {
		t.Errorf("%+v", got)
	}
}
