package proxmoxsafe

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/routes"
)

// countingTransport stands in for the network: it counts what got past the guard.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("network reached")
}

func guardedClient(t *testing.T, p Policy) (*Client, *countingTransport) {
	t.Helper()
	net := &countingTransport{}
	cfg := Config{
		URL: "https://pve.example:8006", TokenID: "a@pve!tok", TokenSecret: "s",
		HTTPClient: &http.Client{Transport: net},
		Policy:     p,
	}
	if len(p.Classes) > 0 {
		cfg.Audit = discardAudit{}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, net
}

// The guard sits below every operation, so it is tested on raw requests:
// even a bug in an operation cannot reach a route the policy does not need.
func TestTransportGuard(t *testing.T) {
	t.Parallel()
	all := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassPower, ClassSnapshot}}
	readonly := Policy{AllowedNodes: []string{"pve1"}}
	snapOnly := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassSnapshot}}
	tests := []guardCase{
		{"read version", "GET", "/version", readonly, true},
		{"read guest status", "GET", "/nodes/pve1/qemu/100/status/current", readonly, true},
		{"read task", "GET", "/nodes/pve1/tasks/UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:a@pve%21tok:/status", readonly, true},
		{"power in read-only", "POST", "/nodes/pve1/qemu/100/status/stop", readonly, false},
		{"power enabled", "POST", "/nodes/pve1/qemu/100/status/stop", all, true},
		{"power disabled by class", "POST", "/nodes/pve1/qemu/100/status/stop", snapOnly, false},
		{"snapshot enabled", "POST", "/nodes/pve1/lxc/200/snapshot", snapOnly, true},
		{"reset is not a power action", "POST", "/nodes/pve1/qemu/100/status/reset", all, false},
		{"delete guest", "DELETE", "/nodes/pve1/qemu/100", all, false},
		{"node execute", "POST", "/nodes/pve1/execute", all, false},
		{"acl change", "PUT", "/access/acl", all, false},
		{"guest config read", "GET", "/nodes/pve1/qemu/100/config", readonly, true},
		{"cloud-init dump (password hash)", "GET", "/nodes/pve1/qemu/100/cloudinit/dump", all, false},
		{"storage content", "GET", "/nodes/pve1/storage/local-lvm/content", readonly, true},
		{"storage upload", "POST", "/nodes/pve1/storage/local/upload", all, false},
		{"vnc proxy ticket", "POST", "/nodes/pve1/qemu/100/vncproxy", all, false},
		{"access ticket", "POST", "/access/ticket", all, false},
		{"agent exec", "POST", "/nodes/pve1/qemu/100/agent/exec", all, false},
		{"rollback", "POST", "/nodes/pve1/qemu/100/snapshot/s1/rollback", all, false},
		{"escaped slash in node", "GET", "/nodes/pve1%2F..%2Faccess/status", all, false},
		{"dot segment", "GET", "/nodes/../access/status", all, false},
		{"trailing slash", "GET", "/version/", all, false},
		{"GET of a POST route", "GET", "/nodes/pve1/qemu/100/status/stop", all, false},
	}
	runGuardCases(t, tests)
}

// TestGuardKnowsEveryClass: the route tables (internal/routes) name the
// classes by string; a class they do not know would open nothing, and a
// name they know that is no class would be a table nobody can enable.
func TestGuardKnowsEveryClass(t *testing.T) {
	t.Parallel()
	var ours []string
	for _, cl := range classOrder {
		ours = append(ours, string(cl))
	}
	slices.Sort(ours)
	if got := routes.Classes(); !slices.Equal(got, ours) {
		t.Errorf("the route tables know the classes %q, the library %q", got, ours)
	}
}

// guardCase is one request sent straight through a guarded client: pass
// says whether the transport guard must let it reach the network under
// policy.
type guardCase struct {
	name, method, path string
	policy             Policy
	pass               bool
}

// runGuardCases sends each case's request below the library and checks
// that it reached the network exactly when it should, and that a request
// the guard stops is refused as not allowed.
func runGuardCases(t *testing.T, tests []guardCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, net := guardedClient(t, tc.policy)
			err := c.api.Do(t.Context(), tc.method, tc.path, url.Values{}, nil)
			reached := net.n.Load() == 1
			if reached != tc.pass {
				t.Fatalf("%s %s reached the network: %v (err %v), want %v", tc.method, tc.path, reached, err, tc.pass)
			}
			if !tc.pass {
				var re *RefusalError
				if !errors.As(err, &re) || !errors.Is(err, ErrNotAllowed) {
					t.Errorf("err = %v, want a RefusalError matching ErrNotAllowed", err)
				}
			}
		})
	}
}
