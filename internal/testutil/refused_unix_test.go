//go:build unix

package testutil

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRefusingAddrHoldsItsPort: no other listener can take the port, and
// connections to it are refused (a closed server's port failed the first).
func TestRefusingAddrHoldsItsPort(t *testing.T) {
	t.Parallel()
	addr := RefusingAddr(t)
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("another listener took %s", addr)
	}
	if c, err := net.Dial("tcp", addr); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
}
