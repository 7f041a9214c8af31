package proxmoxsafe_test

import (
	"errors"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestVersion: GET /version, any valid token may call it; a rejected
// token is ErrUnauthorized, the first thing a setup check tells apart.
func TestVersion(t *testing.T) {
	t.Parallel()
	c := testCluster()
	c.Version = "8.4.1"
	e := newEnvWith(t, c, nil)
	v, err := e.client.Version(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if v.Version != "8.4.1" || v.Release != "8.4" {
		t.Errorf("Version = %+v", v)
	}
	if got := reqLines(e.requests()); len(got) != 1 || got[0] != "GET /version" {
		t.Errorf("requests = %v", got)
	}
	bad := newEnvWith(t, testCluster(), func(c *proxmoxsafe.Config) { c.TokenSecret = "wrong" })
	if _, err := bad.client.Version(t.Context()); !errors.Is(err, proxmoxsafe.ErrUnauthorized) {
		t.Errorf("wrong secret: err = %v, want ErrUnauthorized", err)
	}
}
