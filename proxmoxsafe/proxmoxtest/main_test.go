package proxmoxtest

import (
	"encoding/json"
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
func call(t *testing.T, s *Server, method, path string, form url.Values, auth string) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+"/api2/json"+path, body)
	if err != nil {
		t.Fatal(err)
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
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	a := answer{code: resp.StatusCode, status: resp.Status, header: resp.Header, raw: raw}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, raw, err)
	}
	return a
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
