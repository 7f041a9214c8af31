//go:build !unix

package pve

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// refusingURL returns the URL of a closed server: refused unless another
// listener takes the port meanwhile (see refused_unix_test.go, which
// rules that out).
func refusingURL(t *testing.T) string {
	t.Helper()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	return down.URL
}
