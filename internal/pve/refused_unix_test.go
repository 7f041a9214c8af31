//go:build unix

package pve

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
)

// refusingURL returns the URL of a loopback port that refuses connections
// for the whole test: a socket bound there and never listening. A closed
// server's port does not stay free: on a busy machine another listener
// (another test's server) may take it, and the "refused" request then got
// that server's answer (a 400 was seen). The bound socket, without
// SO_REUSEADDR, keeps every other socket off the port; with no listener
// the kernel refuses each connection.
func refusingURL(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

// TestRefusingURLHoldsItsPort: no other listener can take the port, and
// connections to it are refused (a closed server's port failed the first).
func TestRefusingURLHoldsItsPort(t *testing.T) {
	t.Parallel()
	addr := strings.TrimPrefix(refusingURL(t), "http://")
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
