package proxmoxtest

import (
	"net/http"
	"strings"
	"testing"
)

func TestTLSIdentity(t *testing.T) {
	t.Parallel()
	a, b := newDemo(t), newDemo(t)
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("two servers share a certificate")
	}
	fp := a.Fingerprint()
	if len(fp) != 95 || strings.ToUpper(fp) != fp || strings.Count(fp, ":") != 31 {
		t.Errorf("fingerprint %q", fp)
	}
	if !strings.Contains(string(a.CertificatePEM()), "BEGIN CERTIFICATE") || a.Certificate() == nil {
		t.Error("certificate accessors")
	}
	nodes := get(t, a, "/nodes").body["data"].([]any)
	if nodes[0].(map[string]any)["ssl_fingerprint"] != fp {
		t.Error("local node ssl_fingerprint is not the server's")
	}
	// A client that does not trust the cert fails.
	cl := &http.Client{Transport: &http.Transport{}}
	defer cl.CloseIdleConnections()
	if _, err := cl.Get(a.URL + "/api2/json/version"); err == nil {
		t.Error("untrusted certificate accepted")
	}
}
