package proxmoxsafe

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestTransportGuardTicketLogin: with a user and password, exactly one more
// request passes the guard than the classes need, the ticket login, in
// read-only mode too; with a token it never does.
func TestTransportGuardTicketLogin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method, path string
		ticket, readOnly   bool
		pass               bool
	}{
		{"login with a password, read-only", "POST", "/access/ticket", true, true, true},
		{"login with a password", "POST", "/access/ticket", true, false, true},
		{"login with a token", "POST", "/access/ticket", false, false, false},
		{"read with a password, read-only", "GET", "/version", true, true, true},
		{"power in read-only with a password", "POST", "/nodes/pve1/qemu/100/status/stop", true, true, false},
		{"other access write", "POST", "/access/tfa/alice@pve", true, false, false},
		{"password change", "PUT", "/access/password", true, false, false},
		{"login path with a suffix", "POST", "/access/ticket/x", true, false, false},
		{"GET of the login", "GET", "/access/ticket", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			net := &countingTransport{}
			cfg := Config{URL: "https://pve.example:8006", HTTPClient: &http.Client{Transport: net},
				Policy: Policy{AllowedNodes: []string{"pve1"}, ReadOnly: tc.readOnly}}
			if tc.ticket {
				cfg.Username, cfg.Password = "alice@pve", "long enough password"
			} else {
				cfg.TokenID, cfg.TokenSecret = "a@pve!tok", "s"
			}
			if !tc.readOnly {
				cfg.Policy.Classes = []Class{ClassPower, ClassSnapshot}
				cfg.Audit = discardAudit{}
			}
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, "https://pve.example:8006/api2/json"+tc.path, strings.NewReader(""))
			_, err = c.api.HTTP.Do(req)
			if reached := net.n.Load() == 1; reached != tc.pass {
				t.Fatalf("%s %s reached the network: %v (err %v), want %v", tc.method, tc.path, reached, err, tc.pass)
			}
			if !tc.pass && !errors.Is(err, ErrNotAllowed) {
				t.Errorf("err = %v, want ErrNotAllowed", err)
			}
		})
	}
}
