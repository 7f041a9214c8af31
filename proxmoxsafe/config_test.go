package proxmoxsafe_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

const canary = "PVESECRET-CANARY-7f3a9c1e-0b1d-4e55-9a3b-2c4d5e6f7a8b"

func baseConfig() proxmoxsafe.Config {
	return proxmoxsafe.Config{
		URL:         "https://pve.example:8006",
		TokenID:     "automation@pve!mcp",
		TokenSecret: canary,
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	audit := auditlog.New(&bytes.Buffer{}, nil)
	tests := []struct {
		name   string
		mod    func(*proxmoxsafe.Config)
		substr string
	}{
		{"no url", func(c *proxmoxsafe.Config) { c.URL = "" }, "URL is required"},
		{"plain http", func(c *proxmoxsafe.Config) { c.URL = "http://pve:8006" }, "plain http://"},
		{"ftp", func(c *proxmoxsafe.Config) { c.URL = "ftp://pve" }, "scheme"},
		{"credentials in url", func(c *proxmoxsafe.Config) { c.URL = "https://root:pw@pve:8006" }, "credentials"},
		{"query", func(c *proxmoxsafe.Config) { c.URL = "https://pve:8006/?x=1" }, "query"},
		{"other path", func(c *proxmoxsafe.Config) { c.URL = "https://pve:8006/api2/extjs" }, "path"},
		{"no host", func(c *proxmoxsafe.Config) { c.URL = "https:///api2/json" }, "host"},
		{"port only", func(c *proxmoxsafe.Config) { c.URL = "https://:8006" }, "host"},
		{"port too big", func(c *proxmoxsafe.Config) { c.URL = "https://127.0.0.1:99999" }, `port "99999" is not a port number from 1 to 65535`},
		{"port zero", func(c *proxmoxsafe.Config) { c.URL = "https://pve:0" }, "not a port number"},
		{"empty port", func(c *proxmoxsafe.Config) { c.URL = "https://pve:/api2/json" }, "empty port"},
		{"long path clipped", func(c *proxmoxsafe.Config) { c.URL = "https://pve:8006/" + strings.Repeat("p", 60_000) }, "(60001 bytes)"},
		{"long port clipped", func(c *proxmoxsafe.Config) { c.URL = "https://pve:" + strings.Repeat("9", 60_000) }, "(60000 bytes)"},
		{"no token id", func(c *proxmoxsafe.Config) { c.TokenID = "" }, "TokenID is required"},
		{"token id form", func(c *proxmoxsafe.Config) { c.TokenID = "root@pam" }, "user@realm!tokenname"},
		{"no secret", func(c *proxmoxsafe.Config) { c.TokenSecret = "" }, "TokenSecret is required"},
		{"secret newline", func(c *proxmoxsafe.Config) { c.TokenSecret = canary + "\n" }, "white space"},
		{"bad fingerprint", func(c *proxmoxsafe.Config) { c.Fingerprint = "AB:CD" }, "Fingerprint"},
		{"insecure plus pin", func(c *proxmoxsafe.Config) {
			c.InsecureSkipVerify = true
			c.Fingerprint = strings.Repeat("AB", 32)
		}, "cannot be combined"},
		{"bad CA", func(c *proxmoxsafe.Config) { c.CACertPEM = []byte("not pem") }, "CACertPEM"},
		{"negative timeout", func(c *proxmoxsafe.Config) { c.Timeout = -1 }, "negative"},
		{"bad allowed node", func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = []string{"pve1/../x"} }, "AllowedNodes"},
		{"unknown class", func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{"nuke"} }, "unknown mutation class"},
		{"bad protected", func(c *proxmoxsafe.Config) { c.Policy.ProtectedGuests = []int{5} }, "ProtectedGuests"},
		{"mutations without audit", func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} }, "Audit is required"},
		{"custom transport with TLS", func(c *proxmoxsafe.Config) {
			c.HTTPClient = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("x") })}
			c.Fingerprint = strings.Repeat("AB", 32)
		}, "custom Transport"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig()
			tc.mod(&cfg)
			c, err := proxmoxsafe.New(cfg)
			if err == nil {
				t.Fatalf("New accepted the config: %+v", c)
			}
			if !strings.Contains(err.Error(), tc.substr) {
				t.Errorf("error %q does not mention %q", err, tc.substr)
			}
			var ce *proxmoxsafe.ConfigError
			if !errors.As(err, &ce) || ce.Field == "" || !strings.HasPrefix(ce.Problem, ce.Field) {
				t.Errorf("error %v is not a *ConfigError naming its field", err)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error leaks the token secret: %v", err)
			}
			if len(err.Error()) > 1024 {
				t.Errorf("error is %d bytes: an echoed value is not clipped", len(err.Error()))
			}
		})
	}
	_ = audit
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestNewAcceptsURLForms(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"https://pve:8006", "https://pve:8006/", "https://pve:8006/api2/json", "https://pve:8006/api2/json/", "https://[::1]:8006"} {
		cfg := baseConfig()
		cfg.URL = u
		c, err := proxmoxsafe.New(cfg)
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		if !strings.HasSuffix(c.BaseURL(), ":8006/api2/json") {
			t.Errorf("%s: base = %s", u, c.BaseURL())
		}
	}
	for _, u := range []string{"https://pve:1", "https://pve:65535", "https://pve"} {
		cfg := baseConfig()
		cfg.URL = u
		if _, err := proxmoxsafe.New(cfg); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	cfg := baseConfig()
	cfg.URL = "http://pve:8006"
	cfg.AllowInsecureHTTP = true
	if _, err := proxmoxsafe.New(cfg); err != nil {
		t.Errorf("http with AllowInsecureHTTP: %v", err)
	}
}

func TestInsecureSkipVerifyIsLoud(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	cfg := baseConfig()
	cfg.InsecureSkipVerify = true
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := proxmoxsafe.New(cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "DISABLED") {
		t.Errorf("no warning logged: %q", logs.String())
	}
	if strings.Contains(logs.String(), canary) {
		t.Error("log leaks the secret")
	}
}

func TestPolicyIsCopied(t *testing.T) {
	t.Parallel()
	cfg := baseConfig()
	cfg.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassSnapshot}, ReadOnly: true}
	cfg.Audit = auditlog.New(&bytes.Buffer{}, nil)
	c, err := proxmoxsafe.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policy.AllowedNodes[0] = "evil"
	p := c.Policy()
	if strings.Join(p.AllowedNodes, ",") != "pve1,pve2" {
		t.Errorf("allowed nodes = %v", p.AllowedNodes)
	}
	if len(p.Classes) != 0 || c.Enabled(proxmoxsafe.ClassSnapshot) {
		t.Errorf("read-only must disable every class, got %v", p.Classes)
	}
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	if cl, err := proxmoxsafe.ProfileSafe.Classes(); err != nil || len(cl) != 2 {
		t.Errorf("safe = %v, %v", cl, err)
	}
	if cl, err := proxmoxsafe.ProfileReadOnly.Classes(); err != nil || len(cl) != 0 {
		t.Errorf("readonly = %v, %v", cl, err)
	}
	if _, err := proxmoxsafe.Profile("root").Classes(); err == nil {
		t.Error("unknown profile accepted")
	}
}

// TestConfigErrorField: Field names the setting at fault, set where the
// error is made (it was once parsed from the message's first word, which
// named the wrong field for a negative MaxResponseBytes).
func TestConfigErrorField(t *testing.T) {
	t.Parallel()
	var nilAudit *auditlog.Log
	for _, tc := range []struct {
		mod   func(*proxmoxsafe.Config)
		field string
	}{
		{func(c *proxmoxsafe.Config) { c.MaxResponseBytes = -1 }, "MaxResponseBytes"},
		{func(c *proxmoxsafe.Config) { c.Timeout = -1 }, "Timeout"},
		{func(c *proxmoxsafe.Config) { c.URL = "" }, "URL"},
		{func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = []string{"a/b"} }, "Policy.AllowedNodes"},
		{func(c *proxmoxsafe.Config) { c.MaxWait = time.Millisecond }, "MaxWait"},
		{func(c *proxmoxsafe.Config) { c.Audit = nilAudit }, "Audit"},
	} {
		cfg := baseConfig()
		tc.mod(&cfg)
		_, err := proxmoxsafe.New(cfg)
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("New(%s) = %v, want a ConfigError with Field %q", tc.field, err, tc.field)
		}
	}
}

// TestNewRefusesTypedNilSinks: a nil *auditlog.Log (or approver) in the
// interface is not "no sink"; it used to pass New and panic at the first
// mutation. It is refused whether or not a mutation class is enabled.
func TestNewRefusesTypedNilSinks(t *testing.T) {
	t.Parallel()
	var nilAudit *auditlog.Log
	var nilApprover *nilApproverT
	for name, mod := range map[string]func(*proxmoxsafe.Config){
		"audit with classes": func(c *proxmoxsafe.Config) {
			c.Audit = nilAudit
			c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower}
		},
		"audit read-only": func(c *proxmoxsafe.Config) { c.Audit = nilAudit },
		"approver":        func(c *proxmoxsafe.Config) { c.Approvers = []proxmoxsafe.Approver{nilApprover} },
	} {
		cfg := baseConfig()
		mod(&cfg)
		c, err := proxmoxsafe.New(cfg)
		if err == nil || !strings.Contains(err.Error(), "nil") {
			t.Errorf("%s: New = %v, %v; want a refusal naming the nil value", name, c, err)
		}
	}
}

type nilApproverT struct{}

func (*nilApproverT) Name() string { return "nil" }

func (*nilApproverT) Approve(context.Context, proxmoxsafe.ApprovalRequest) error { return nil }
