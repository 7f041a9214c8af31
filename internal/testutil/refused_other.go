//go:build !unix

package testutil

import (
	"net"
	"testing"
)

// RefusingAddr returns the address of a closed listener: refused unless
// another listener takes the port meanwhile (refused_unix.go rules that
// out where it can).
func RefusingAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
