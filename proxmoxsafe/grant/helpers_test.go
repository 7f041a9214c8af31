package grant_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// tokenSecret is the fake's token secret; no log line or audit record
// may hold it.
const tokenSecret = "PVESECRET-CANARY-grant-5d2e7c41"

// testCluster is a small cluster: running guests 100 and 102 on pve1.
func testCluster() *proxmoxtest.Cluster {
	return &proxmoxtest.Cluster{
		Name: "lab", Version: "9.1.1",
		Nodes: []*proxmoxtest.Node{{Name: "pve1", Online: true, IP: "10.0.0.1", CPUs: 8, MaxMem: 64 << 30}},
		Guests: []*proxmoxtest.Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "web1", Status: "running", Uptime: 86400, CPUs: 2, MaxMem: 2 << 30},
			{VMID: 102, Node: "pve1", Type: "qemu", Name: "web2", Status: "running", Uptime: 86400, CPUs: 1, MaxMem: 1 << 30},
		},
		Tokens: map[string]*proxmoxtest.Token{
			"automation@pve!mcp": {Secret: tokenSecret, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}},
		},
	}
}

// auditLines is an audit sink that keeps each record as a JSON line (the
// record's own encoding), for tests that look for fields in them.
type auditLines struct{ buf testutil.SyncBuffer }

func (a *auditLines) Record(_ context.Context, rec proxmoxsafe.AuditRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = a.buf.Write(append(raw, '\n'))
	return err
}

func (a *auditLines) String() string { return a.buf.String() }

type env struct {
	fake   *proxmoxtest.Server
	client *proxmoxsafe.Client
	audit  *auditLines
}

// newEnv starts a fake of cluster and a client whose power and snapshot
// classes are enabled on pve1; mod may change the config before New.
func newEnv(t *testing.T, cluster *proxmoxtest.Cluster, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	fake := proxmoxtest.NewServer(cluster)
	t.Cleanup(fake.Close)
	return envOn(t, fake, mod)
}

// envOn is newEnv for a running fake: a second server (or a restarted
// one) for the same cluster.
func envOn(t *testing.T, fake *proxmoxtest.Server, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	e := &env{fake: fake, audit: &auditLines{}}
	cfg := proxmoxsafe.Config{
		URL: fake.URL, TokenID: "automation@pve!mcp", TokenSecret: tokenSecret, Fingerprint: fake.Fingerprint(),
		Logger: slog.New(slog.DiscardHandler),
		Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot}},
		Audit:  e.audit,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := proxmoxsafe.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.client = c
	t.Cleanup(func() {
		if strings.Contains(e.audit.String(), tokenSecret) {
			t.Error("the audit records hold the token secret")
		}
	})
	return e
}

// grantEnv is an env whose power class is approved only by grants kept in
// dir.
func grantEnv(t *testing.T, dir string) (*env, *grant.Store) {
	t.Helper()
	store := openStore(t, dir)
	e := newEnv(t, testCluster(), approvedBy(store, proxmoxsafe.ClassPower))
	return e, store
}

// grantEnvOn is grantEnv for a running fake (a restarted server of the
// same cluster, or a second server for it).
func grantEnvOn(t *testing.T, fake *proxmoxtest.Server, dir string) (*env, *grant.Store) {
	t.Helper()
	store := openStore(t, dir)
	return envOn(t, fake, approvedBy(store, proxmoxsafe.ClassPower)), store
}

func openStore(t testing.TB, dir string) *grant.Store {
	t.Helper()
	store, err := grant.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// approvedBy sets class's only approval level to the grant store.
func approvedBy(store *grant.Store, class proxmoxsafe.Class) func(*proxmoxsafe.Config) {
	return func(c *proxmoxsafe.Config) {
		c.Approvers = []proxmoxsafe.Approver{store}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{class: {proxmoxsafe.LevelGrant}}
	}
}

// askGrant calls in and expects a grant refusal; it returns the code.
func askGrant(t *testing.T, e *env, in proxmoxsafe.GuestPowerInput) string {
	t.Helper()
	before := len(e.fake.MutatingRequests())
	_, err := e.client.GuestPower(t.Context(), in)
	var gr *grant.RequiredError
	if !errors.As(err, &gr) || !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
		t.Fatalf("GuestPower: %v, want a grant refusal", err)
	}
	if n := len(e.fake.MutatingRequests()); n != before {
		t.Fatalf("a refused call sent %d mutating requests", n-before)
	}
	for _, want := range []string{gr.Grant.Code, "proxmox-safe-mcp approve " + gr.Grant.Code, "no action was taken", string(in.Action)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	return gr.Grant.Code
}

// powerIn is a power input with its phrase, which the grant level
// ignores (the refusal says so before the grant's code).
func powerIn(node string, typ proxmoxsafe.GuestType, vmid int, a proxmoxsafe.PowerAction) proxmoxsafe.GuestPowerInput {
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}, Action: a}
	in.Approval = proxmoxsafe.ApprovalPhrase(string(a), in.Target())
	return in
}

func changeGuest(fake *proxmoxtest.Server, vmid int, fn func(g *proxmoxtest.Guest)) {
	fake.Update(func(c *proxmoxtest.Cluster) {
		for _, g := range c.Guests {
			if g.VMID == vmid {
				fn(g)
			}
		}
	})
}

// nonGET renders the fake's mutating requests as "METHOD /path".
func nonGET(e *env) []string {
	var out []string
	for _, r := range e.fake.MutatingRequests() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}
