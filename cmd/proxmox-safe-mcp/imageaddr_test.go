package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHealthcheckUsesImageAddr: the image's HEALTHCHECK finds the port the
// deployment chose, and the image default otherwise.
func TestHealthcheckUsesImageAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"MCP_IMAGE_HTTP_ADDR", "0.0.0.0:8123"}, "127.0.0.1:8123"},
		{[]string{"MCP_IMAGE_HTTP_ADDR", "0.0.0.0:8123", "MCP_PORT", "3000"}, "127.0.0.1:3000"},
	} {
		var out, errOut bytes.Buffer
		// Nothing listens there: the probe fails, naming the URL it tried.
		healthcheck(t.Context(), []string{"--timeout", "2s"}, env(tc.env...), &out, &errOut)
		if !strings.Contains(out.String()+errOut.String(), tc.want) {
			t.Errorf("%v: healthcheck probed %q, want %s", tc.env, out.String()+errOut.String(), tc.want)
		}
	}
}
