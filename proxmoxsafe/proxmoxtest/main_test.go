package proxmoxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const defaultAuth = "PVEAPIToken=" + DefaultTokenID + "=" + DefaultTokenSecret

// answer is a decoded response.
type answer struct {
	code   int
	status string // full status, e.g. "500 Configuration file ..."
	header http.Header
	raw    []byte
	body   map[string]any
}

// call sends one request; auth "" uses the default token, "-" sends none.
// It fails the test on a transport or decoding error, so it must run on
// the test's goroutine; other goroutines use tryCall.
func call(t *testing.T, s *Server, method, path string, form url.Values, auth string) answer {
	t.Helper()
	a, err := tryCall(t.Context(), s, method, path, form, auth)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tryCall is call that returns its error instead of failing the test.
func tryCall(ctx context.Context, s *Server, method, path string, form url.Values, auth string) (answer, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+"/api2/json"+path, body)
	if err != nil {
		return answer{}, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	switch auth {
	case "":
		req.Header.Set("Authorization", defaultAuth)
	case "-":
	default:
		req.Header.Set("Authorization", auth)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: reading body: %w", method, path, err)
	}
	a := answer{code: resp.StatusCode, status: resp.Status, header: resp.Header, raw: raw}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		return a, fmt.Errorf("%s %s: body %q is not a JSON object: %w", method, path, raw, err)
	}
	return a, nil
}

func get(t *testing.T, s *Server, path string) answer {
	t.Helper()
	return call(t, s, http.MethodGet, path, nil, "")
}

func post(t *testing.T, s *Server, path string, form url.Values) answer {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	return call(t, s, http.MethodPost, path, form, "")
}

// newDemo starts a demo server that is closed with the test.
func newDemo(t *testing.T) *Server {
	t.Helper()
	s := NewServer(DemoCluster())
	t.Cleanup(s.Close)
	return s
}

func tokenAuth(id, secret string) string { return "PVEAPIToken=" + id + "=" + secret }

func listOf(t *testing.T, a answer) []map[string]any {
	t.Helper()
	if a.code != http.StatusOK {
		t.Fatalf("status %s: %s", a.status, a.raw)
	}
	var out []map[string]any
	for _, e := range a.body["data"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func del(t *testing.T, s *Server, path string) answer {
	t.Helper()
	return call(t, s, http.MethodDelete, path, nil, "")
}
