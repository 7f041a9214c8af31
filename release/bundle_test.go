package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStagedManifestNamesTheBinaryAndTheSettings(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	bin := filepath.Join(t.TempDir(), "proxmox-safe-mcp.exe")
	os.WriteFile(bin, []byte("binary"), 0o700)
	tg := target{"windows", "amd64"}
	if err := stageBundle(options{version: "v0.1.0", out: out, root: ".."}, tg, bin); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "mcpb", "proxmox-safe-mcp_0.1.0_windows_amd64")
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version string `json:"version"`
		Server  struct {
			Type       string `json:"type"`
			EntryPoint string `json:"entry_point"`
			MCPConfig  struct {
				Command string            `json:"command"`
				Env     map[string]string `json:"env"`
			} `json:"mcp_config"`
		} `json:"server"`
		Compatibility struct {
			Platforms []string `json:"platforms"`
		} `json:"compatibility"`
		UserConfig map[string]struct {
			Sensitive bool `json:"sensitive"`
			Required  bool `json:"required"`
		} `json:"user_config"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != "0.1.0" || m.Server.Type != "binary" || m.Server.EntryPoint != "server/proxmox-safe-mcp.exe" ||
		m.Server.MCPConfig.Command != "${__dirname}/server/proxmox-safe-mcp.exe" || strings.Join(m.Compatibility.Platforms, ",") != "win32" {
		t.Errorf("manifest: %+v", m)
	}
	if _, err := os.Stat(filepath.Join(dir, "server", "proxmox-safe-mcp.exe")); err != nil {
		t.Errorf("binary not staged: %v", err)
	}
	// Every setting the bundle asks for reaches the binary by its
	// documented variable; only the secret is sensitive.
	env := map[string]string{"pve_url": "PVE_URL", "token_id": "PVE_API_TOKEN_ID", "token_secret": "PVE_API_TOKEN_SECRET",
		"tls_fingerprint": "PVE_TLS_FINGERPRINT", "allowed_nodes": "PVE_ALLOWED_NODES"}
	for key, variable := range env {
		uc, ok := m.UserConfig[key]
		if !ok {
			t.Errorf("user_config lacks %s", key)
		}
		if got := m.Server.MCPConfig.Env[variable]; got != "${user_config."+key+"}" {
			t.Errorf("env %s = %q, want ${user_config.%s}", variable, got, key)
		}
		if uc.Sensitive != (key == "token_secret") {
			t.Errorf("%s sensitive = %v", key, uc.Sensitive)
		}
	}
	if len(m.UserConfig) != len(env) || len(m.Server.MCPConfig.Env) != len(env) {
		t.Errorf("user_config %d entries, env %d, want %d each", len(m.UserConfig), len(m.Server.MCPConfig.Env), len(env))
	}
}

func TestServerJSONMatchesTheRegistrySchema(t *testing.T) {
	t.Parallel()
	out, bundles := t.TempDir(), t.TempDir()
	var targets []target
	for _, s := range defaultTargets {
		tg, _ := parseTarget(s)
		targets = append(targets, tg)
		os.WriteFile(filepath.Join(bundles, tg.base("v0.1.0")+".mcpb"), []byte(s), 0o600)
	}
	if err := finish(options{version: "v0.1.0", out: out, root: "..", bundles: bundles}, targets); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(out, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validateServerDoc("..", doc); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Version  string `json:"version"`
		Packages []struct {
			RegistryType string `json:"registryType"`
			Identifier   string `json:"identifier"`
			FileSha256   string `json:"fileSha256"`
		} `json:"packages"`
	}
	json.Unmarshal(doc, &s)
	if s.Version != "0.1.0" || len(s.Packages) != len(targets)+1 {
		t.Fatalf("server.json: %+v", s)
	}
	linux := s.Packages[0]
	if linux.Identifier != releaseURL+"v0.1.0/proxmox-safe-mcp_0.1.0_linux_amd64.mcpb" {
		t.Errorf("first bundle %q", linux.Identifier)
	}
	if want, _ := fileSHA256(filepath.Join(bundles, "proxmox-safe-mcp_0.1.0_linux_amd64.mcpb")); linux.FileSha256 != want {
		t.Errorf("linux bundle sha %q, want %q", linux.FileSha256, want)
	}
	if last := s.Packages[len(targets)]; last.RegistryType != "oci" || last.Identifier != imageName+":0.1.0" {
		t.Errorf("image package %+v", last)
	}
	sums, _ := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if !strings.Contains(string(sums), linux.FileSha256+"  proxmox-safe-mcp_0.1.0_linux_amd64.mcpb\n") {
		t.Errorf("SHA256SUMS lacks the bundle:\n%s", sums)
	}
}

func TestFinishWithoutBundlesSaysWhatToRun(t *testing.T) {
	t.Parallel()
	err := finish(options{version: "v0.1.0", out: t.TempDir(), root: "..", bundles: t.TempDir()}, []target{{"linux", "amd64"}})
	if err == nil || !strings.Contains(err.Error(), "mcpb pack") {
		t.Fatalf("missing bundle: %v", err)
	}
}
