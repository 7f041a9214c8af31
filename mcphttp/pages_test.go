package mcphttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// TestPages: Options.Pages is served under PagesPath behind the Host
// check, never sees the Authorization header, and leaves the MCP endpoint
// as it was (bearer token still required there).
func TestPages(t *testing.T) {
	t.Parallel()
	var sawAuth []string
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth = append(sawAuth, r.Header.Get("Authorization"))
		io.WriteString(w, "page "+r.URL.Path)
	})
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{Pages: pages, PagesPath: "/approve/"}})
	get := func(path string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", f.ts.URL+path, nil)
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/approve/grant/X", map[string]string{"Authorization": "Bearer " + aliceTok}); code != http.StatusOK || body != "page /approve/grant/X" {
		t.Errorf("page: %d %q", code, body)
	}
	if len(sawAuth) != 1 || sawAuth[0] != "" {
		t.Errorf("the page saw Authorization %q", sawAuth)
	}
	if code, _ := get("/approve/", map[string]string{"Host": "evil.example"}); code != http.StatusForbidden {
		t.Errorf("rebinding Host: %d, want 403", code)
	}
	if len(sawAuth) != 1 {
		t.Error("a request with a foreign Host reached the page")
	}
	if code, _ := get("/approvex", nil); code != http.StatusNotFound {
		t.Errorf("/approvex: %d, want 404", code)
	}
	if code, _ := get(strings.TrimPrefix(f.url, f.ts.URL), map[string]string{"Accept": "text/event-stream"}); code != http.StatusUnauthorized {
		t.Errorf("MCP endpoint without a token: %d, want 401", code)
	}
}

// TestPagesPathChecked: PagesPath must be a prefix of its own.
func TestPagesPathChecked(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t"}, nil)
	page := http.NotFoundHandler()
	for _, c := range []struct {
		path  string
		pages http.Handler
	}{
		{"", page}, {"/approve", page}, {"/", page}, {"/mcp/", page}, {"/healthz/", page},
		{"/.well-known/x/", page}, {"/a?b/", page}, {"/approve/", nil},
	} {
		if _, err := mcphttp.New(srv, &mcphttp.Options{Pages: c.pages, PagesPath: c.path}); err == nil {
			t.Errorf("PagesPath %q (pages %v) accepted", c.path, c.pages != nil)
		}
	}
}
