package settings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestClustersFile: the example of docs/CLUSTERS.md (its paths made real)
// becomes one Config per cluster: each key set as its variable would set
// it, secrets from a file and from a variable, read-only and the
// process's defaults applied, each cluster's audit log and locks in its
// own subdirectory and the grants in one store. A key replaces the
// process's setting (PROXMOX_SAFE_PROTECTED=999 here).
func TestClustersFile(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/CLUSTERS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(doc), "```yaml\n")
	example, _, _ := strings.Cut(after, "```")
	secret := writeSecret(t, "00000000-0000-0000-0000-000000000000\n", 0o600)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	example = strings.NewReplacer("/run/secrets/pve-lab-token", secret, "/etc/ssl/pve-prod-ca.pem", ca,
		`"AA:BB:…:FF"`, `"`+strings.Repeat("AB:", 31)+`AB"`).Replace(example)
	path := filepath.Join(t.TempDir(), "clusters.yaml")
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	c, err := Parse(nil, env("HOME", state, "XDG_STATE_HOME", state, "PROXMOX_SAFE_CLUSTERS_FILE", path,
		"PVE_PROD_PASSWORD", "a-long-password", "PROXMOX_SAFE_PROTECTED", "999"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Clusters) != 2 || len(c.Warnings) != 0 {
		t.Fatalf("clusters %d, warnings %q", len(c.Clusters), c.Warnings)
	}
	lab, prod := c.Clusters[0], c.Clusters[1]
	if lab.ClusterName != "lab" || lab.URL != "https://pve-lab.example:8006" || lab.TokenSecret.Reveal() == "" || lab.Profile != "admin" ||
		!slices.Equal(lab.AllowedNodes, []string{"pve1", "pve2"}) || lab.MaxWait.String() != "5m0s" ||
		!slices.Equal(lab.Protect.ProtectedIDs, []int{100}) || !slices.Contains(lab.Protect.ProtectedTags, "keep") ||
		lab.Approvals[proxmoxsafe.ClassDestroy][1] != proxmoxsafe.LevelGrant {
		t.Errorf("lab: %+v", lab)
	}
	if prod.ClusterName != "prod" || prod.Username != "mcp@pve" || prod.Password.Reveal() != "a-long-password" || !prod.ReadOnly ||
		prod.CAFile != ca || len(prod.Protect.ProtectedIDs) != 0 || !slices.Equal(prod.Protect.ProtectedNames, []string{"db-primary"}) {
		t.Errorf("prod: %+v", prod)
	}
	dir := filepath.Join(state, "proxmox-safe-mcp")
	if lab.AuditLog != filepath.Join(dir, "clusters", "lab", "audit.jsonl") || lab.LockDir != filepath.Join(dir, "clusters", "lab", "locks") ||
		lab.GrantDir != filepath.Join(dir, "grants") || prod.GrantDir != lab.GrantDir {
		t.Errorf("lab's state: log %s, locks %s, grants %s; prod's grants %s", lab.AuditLog, lab.LockDir, lab.GrantDir, prod.GrantDir)
	}
}

// TestClustersFileErrors: each mistake is one error naming the cluster
// and the key; nothing is guessed.
func TestClustersFileErrors(t *testing.T) {
	t.Parallel()
	secret := writeSecret(t, "00000000-0000-0000-0000-000000000000\n", 0o600)
	ok := "  - name: lab\n    url: https://pve:8006\n    token_id: \"a@pve!mcp\"\n    token_secret_file: " + secret + "\n"
	for _, tc := range []struct{ name, body, want string }{
		{"empty", "", "is empty"},
		{"no clusters", "clusters: []\n", "names no cluster"},
		{"unknown key", "clusters:\n" + ok + "    urll: x\n", "urll"},
		{"bad name", "clusters:\n" + strings.Replace(ok, "name: lab", "name: Lab", 1), "lower-case DNS label"},
		{"twice", "clusters:\n" + ok + ok, "used twice"},
		{"no url", "clusters:\n  - name: lab\n", "cluster \"lab\""},
		{"bad profile", "clusters:\n" + ok + "    profile: root\n", "profile"},
		{"two secrets", "clusters:\n" + ok + "    token_secret_env: X\n", "token_secret_env"},
		{"two documents", "clusters:\n" + ok + "---\nclusters: []\n", "more than one YAML document"},
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Parse(nil, env("HOME", t.TempDir(), "PROXMOX_SAFE_CLUSTERS_FILE", path, "X", "y"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), ClustersSetting) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("clusters:\n"+ok), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(nil, env("HOME", t.TempDir(), "PROXMOX_SAFE_CLUSTERS_FILE", path, "PVE_URL", "https://x:8006")); err == nil || !strings.Contains(err.Error(), "unset PVE_URL") {
		t.Errorf("PVE_URL beside the file: %v", err)
	}
}
