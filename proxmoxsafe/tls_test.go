package proxmoxsafe_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestTLS(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(testCluster())
	t.Cleanup(fake.Close)
	other := proxmoxtest.NewServer(testCluster()) // a different self-signed certificate
	t.Cleanup(other.Close)

	tests := []struct {
		name   string
		mod    func(*proxmoxsafe.Config)
		wantOK bool
		substr string
	}{
		{"default refuses self-signed", func(*proxmoxsafe.Config) {}, false, "certificate"},
		{"CA file", func(c *proxmoxsafe.Config) { c.CACertPEM = fake.CertificatePEM() }, true, ""},
		{"wrong CA", func(c *proxmoxsafe.Config) { c.CACertPEM = other.CertificatePEM() }, false, "certificate"},
		{"pin", func(c *proxmoxsafe.Config) { c.Fingerprint = fake.Fingerprint() }, true, ""},
		{"pin lower case without colons", func(c *proxmoxsafe.Config) {
			c.Fingerprint = strings.ToLower(strings.ReplaceAll(fake.Fingerprint(), ":", ""))
		}, true, ""},
		{"wrong pin", func(c *proxmoxsafe.Config) { c.Fingerprint = other.Fingerprint() }, false, "does not match the configured pin"},
		{"pin and CA", func(c *proxmoxsafe.Config) {
			c.Fingerprint = fake.Fingerprint()
			c.CACertPEM = fake.CertificatePEM()
		}, true, ""},
		{"right pin, wrong CA", func(c *proxmoxsafe.Config) {
			c.Fingerprint = fake.Fingerprint()
			c.CACertPEM = other.CertificatePEM()
		}, false, "certificate"},
		{"explicit insecure", func(c *proxmoxsafe.Config) { c.InsecureSkipVerify = true }, true, ""},
		{"injected client keeps TLS settings", func(c *proxmoxsafe.Config) {
			c.HTTPClient = &http.Client{}
			c.Fingerprint = fake.Fingerprint()
		}, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := proxmoxsafe.Config{URL: fake.URL, TokenID: "automation@pve!mcp", TokenSecret: canary}
			tc.mod(&cfg)
			c, err := proxmoxsafe.New(cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			_, err = c.ClusterStatus(t.Context())
			if tc.wantOK != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tc.wantOK)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.substr) {
					t.Errorf("err = %v, want it to mention %q", err, tc.substr)
				}
				if strings.Contains(err.Error(), canary) {
					t.Error("error leaks the secret")
				}
			}
		})
	}
}

func TestPlainHTTP(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewUnstartedServer(testCluster())
	fake.Start()
	t.Cleanup(fake.Close)
	cfg := proxmoxsafe.Config{URL: fake.URL, TokenID: "automation@pve!mcp", TokenSecret: canary}
	if _, err := proxmoxsafe.New(cfg); err == nil || !strings.Contains(err.Error(), "plain http://") {
		t.Fatalf("http:// accepted without AllowInsecureHTTP: %v", err)
	}
	cfg.AllowInsecureHTTP = true
	c, err := proxmoxsafe.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ClusterStatus(t.Context()); err != nil {
		t.Errorf("with AllowInsecureHTTP: %v", err)
	}
}

func TestAuthErrorsExplained(t *testing.T) {
	t.Parallel()
	t.Run("401 wrong secret", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *proxmoxsafe.Config) { c.TokenSecret = "11111111-2222-4333-8444-555555555555" })
		_, err := e.client.ClusterStatus(t.Context())
		if !errors.Is(err, proxmoxsafe.ErrUnauthorized) || !strings.Contains(err.Error(), "token was rejected") {
			t.Errorf("err = %v", err)
		}
		// Exactly one sentinel matches, as the sentinels' doc promises.
		if errors.Is(err, proxmoxsafe.ErrUpstream) {
			t.Errorf("a 401 also matches ErrUpstream: %v", err)
		}
		if strings.Contains(err.Error(), "11111111-2222") {
			t.Error("error leaks the secret")
		}
	})
	t.Run("403 missing privilege", func(t *testing.T) {
		t.Parallel()
		c := testCluster()
		c.Tokens["automation@pve!mcp"].Privileges = map[string][]string{"/": {"VM.Audit"}}
		e := newEnvWith(t, c, nil)
		_, err := e.client.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"})
		var ae *proxmoxsafe.APIError
		if !errors.Is(err, proxmoxsafe.ErrForbidden) || !errors.As(err, &ae) {
			t.Fatalf("err = %v, want ErrForbidden", err)
		}
		path, priv, ok := ae.MissingPrivilege()
		if !ok || path != "/nodes/pve1" || priv != "Sys.Audit" {
			t.Errorf("missing privilege = %q %q %v (err %v)", path, priv, ok, err)
		}
		if !strings.Contains(err.Error(), "lacks privilege Sys.Audit on /nodes/pve1") {
			t.Errorf("err not explained: %v", err)
		}
	})
}

func TestUpstreamFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault proxmoxtest.Fault
		mod   func(*proxmoxsafe.Config)
		kind  error
	}{
		{"500 with reason", proxmoxtest.Fault{Path: "/cluster/status", Status: 500, Reason: "cluster not ready - no quorum?"}, nil, proxmoxsafe.ErrUpstream},
		{"malformed body", proxmoxtest.Fault{Path: "/cluster/status", Body: []byte(`{"data":[{"type":`)}, nil, proxmoxsafe.ErrUpstream},
		{"oversized body", proxmoxtest.Fault{Path: "/cluster/status", BodySize: 2 << 20}, func(c *proxmoxsafe.Config) { c.MaxResponseBytes = 1 << 20 }, proxmoxsafe.ErrUpstream},
		{"dropped connection", proxmoxtest.Fault{Path: "/cluster/status", Drop: true}, nil, proxmoxsafe.ErrUpstream},
		{"slow upstream", proxmoxtest.Fault{Path: "/cluster/status", Latency: 2e9}, func(c *proxmoxsafe.Config) { c.Timeout = 50e6 }, proxmoxsafe.ErrUpstream},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.mod)
			e.fake.InjectFault(tc.fault)
			_, err := e.client.ClusterStatus(t.Context())
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			if strings.Contains(err.Error(), canary) {
				t.Error("error leaks the secret")
			}
		})
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if strings.Contains(r.Header.Get("Authorization"), canary) {
			t.Error("the token was sent to the redirect target")
		}
	}))
	t.Cleanup(target.Close)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(origin.Close)
	c, err := proxmoxsafe.New(proxmoxsafe.Config{URL: origin.URL, TokenID: "automation@pve!mcp", TokenSecret: canary, AllowInsecureHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ClusterStatus(t.Context()); err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("err = %v, want a refused redirect", err)
	}
	if hits.Load() != 0 {
		t.Errorf("redirect target got %d requests", hits.Load())
	}
}
