//go:build unix

package testutil

import (
	"fmt"
	"syscall"
	"testing"
)

// RefusingAddr returns a loopback address ("127.0.0.1:port") that refuses
// connections until the test ends: a socket is bound there and never
// listens. A closed server's port does not stay free: on a busy machine
// another listener (another test's server) may take it, and a request
// meant to be refused reaches that server instead. The bound socket,
// without SO_REUSEADDR, keeps every other socket off the port, in this
// process and in its children; with no listener the kernel refuses each
// connection.
func RefusingAddr(t testing.TB) string {
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
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
