package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestImageAddrIsOverridden: an image's MCP_IMAGE_HTTP_ADDR is the lowest
// default. A deployment switching images keeps its own MCP_TRANSPORT,
// MCP_HOST, MCP_PORT or MCP_HTTP_ADDR and gets what they say, never a
// conflict with the image (issue 12: switch by changing the image only).
func TestImageAddrIsOverridden(t *testing.T) {
	t.Parallel()
	const image = "MCP_IMAGE_HTTP_ADDR"
	tests := []struct {
		name          string
		env           []string
		transport     string
		addr          string // "" for stdio
		wantErrSubstr string
	}{
		{"image default alone", []string{image, "0.0.0.0:8000"}, transportStreamable, "0.0.0.0:8000", ""},
		{"deployment's port", []string{image, "0.0.0.0:8000", "MCP_PORT", "3000"}, transportStreamable, "0.0.0.0:3000", ""},
		{"deployment's host", []string{image, "0.0.0.0:8000", "MCP_HOST", "127.0.0.1"}, transportStreamable, "127.0.0.1:8000", ""},
		{"deployment's sse", []string{image, "0.0.0.0:8000", "MCP_TRANSPORT", "sse"}, transportSSE, "0.0.0.0:8000", ""},
		{"deployment's own address", []string{image, "0.0.0.0:8000", "MCP_HTTP_ADDR", "0.0.0.0:9000"}, transportStreamable, "0.0.0.0:9000", ""},
		{"deployment asks for stdio", []string{image, "0.0.0.0:8000", "MCP_TRANSPORT", "stdio"}, transportStdio, "", ""},
		{"bad image address", []string{image, "0.0.0.0:http"}, "", "", "MCP_IMAGE_HTTP_ADDR: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kv := append([]string{"MCP_AUTH_TOKEN", strings.Repeat("t", 40)}, tc.env...)
			c, err := parseConfig([]string{"--demo"}, env(kv...))
			if tc.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErrSubstr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseConfig: %v", err)
			}
			if c.HTTP.Transport != tc.transport {
				t.Errorf("transport = %q, want %q", c.HTTP.Transport, tc.transport)
			}
			if tc.transport != transportStdio && c.HTTP.Addr != tc.addr {
				t.Errorf("address = %q, want %q", c.HTTP.Addr, tc.addr)
			}
		})
	}
}

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
