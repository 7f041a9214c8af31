package proxmoxsafe

import (
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
)

// captureTransport stands in for the network and keeps the escaped path
// of every request that got past the guard.
type captureTransport struct {
	mu    sync.Mutex
	paths []string
}

func (c *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = append(c.paths, req.Method+" "+req.URL.EscapedPath())
	return nil, errors.New("network reached")
}

func (c *captureTransport) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.paths
	c.paths = nil
	return out
}

// gatewayClient is a Client with every class, the gateway's included,
// enabled on pve1, gateway-write approved with no approval (so only the
// path rules, the deny list and the guard decide), over captureTransport.
func gatewayClient(t testing.TB, readOnly bool) (*Client, *captureTransport) {
	t.Helper()
	net := &captureTransport{}
	c, err := New(Config{
		URL: "https://pve.example:8006", TokenID: "a@pve!tok", TokenSecret: "s",
		HTTPClient: &http.Client{Transport: net},
		Policy: Policy{AllowedNodes: []string{"pve1"}, Classes: slices.Clone(classOrder), ReadOnly: readOnly,
			Approvals: map[Class][]ApprovalLevel{ClassGatewayWrite: {LevelNone}, ClassDestroy: {LevelPhrase}}},
		Audit: discardAudit{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, net
}

// TestGatewayGuardRoutes: what the gateway's guard routes let through.
func TestGatewayGuardRoutes(t *testing.T) {
	t.Parallel()
	gwOnly := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassGateway}}
	gwWrite := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassGateway, ClassGatewayWrite}, Approvals: map[Class][]ApprovalLevel{ClassGatewayWrite: {LevelPhrase}}}
	withDestroy := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassGatewayWrite, ClassDestroy},
		Approvals: map[Class][]ApprovalLevel{ClassGatewayWrite: {LevelPhrase}, ClassDestroy: {LevelPhrase}}}
	tests := []struct {
		name, method, path string
		policy             Policy
		readOnly           bool
		pass               bool
	}{
		{"gateway GET of any path", "GET", "/cluster/options", gwOnly, false, true},
		{"gateway GET on an allowed node", "GET", "/nodes/pve1/qemu/100/pending", gwOnly, false, true},
		{"gateway GET on another node", "GET", "/nodes/pve2/qemu/100/pending", gwOnly, false, false},
		{"gateway POST without gateway-write", "POST", "/cluster/ha/groups", gwOnly, false, false},
		{"gateway-write POST", "POST", "/cluster/ha/groups", Policy{}, false, true},
		{"gateway-write DELETE of a path no class covers", "DELETE", "/nodes/pve1/qemu/100/firewall/rules/0", gwWrite, false, true},
		// A dedicated operation's request passes only its class's route.
		{"gateway-write DELETE of a guest", "DELETE", "/nodes/pve1/qemu/100", gwWrite, false, false},
		{"gateway-write stop", "POST", "/nodes/pve1/qemu/100/status/stop", gwWrite, false, false},
		{"gateway-write snapshot", "POST", "/nodes/pve1/lxc/200/snapshot", gwWrite, false, false},
		{"gateway-write config", "POST", "/nodes/pve1/qemu/100/config", gwWrite, false, false},
		{"gateway-write with the destroy class", "DELETE", "/nodes/pve1/qemu/100", withDestroy, false, true},
		{"gateway-write PATCH", "PATCH", "/cluster/ha/groups", Policy{}, false, false},
		{"read-only keeps the gateway GET", "GET", "/cluster/options", Policy{}, true, true},
		{"read-only refuses gateway-write", "POST", "/cluster/ha/groups", Policy{}, true, false},
		{"escaped slash", "GET", "/nodes/pve1%2Fqemu", Policy{}, false, false},
		{"escaped dot-dot", "GET", "/cluster/%2E%2E/access/ticket", Policy{}, false, false},
		{"escaped backslash", "GET", "/cluster/a%5Cb", Policy{}, false, false},
		{"escaped space", "GET", "/cluster/a%20b", Policy{}, false, false},
		{"denied read", "GET", "/nodes/pve1/qemu/100/cloudinit/dump", Policy{}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var c *Client
			var net *captureTransport
			if tc.policy.Classes != nil {
				net = &captureTransport{}
				var err error
				c, err = New(Config{URL: "https://pve.example:8006", TokenID: "a@pve!tok", TokenSecret: "s",
					HTTPClient: &http.Client{Transport: net}, Policy: tc.policy, Audit: discardAudit{}})
				if err != nil {
					t.Fatal(err)
				}
			} else {
				c, net = gatewayClient(t, tc.readOnly)
			}
			req, err := http.NewRequestWithContext(t.Context(), tc.method, "https://pve.example:8006/api2/json"+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.api.HTTP.Transport.RoundTrip(req)
			got := net.take()
			if (len(got) == 1) != tc.pass {
				t.Fatalf("%s %s reached the network: %v (err %v), want %v", tc.method, tc.path, got, err, tc.pass)
			}
			if !tc.pass && !errors.Is(err, ErrNotAllowed) {
				t.Errorf("err = %v, want ErrNotAllowed", err)
			}
		})
	}
}
