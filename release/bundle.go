package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Where a release's files are published. The registry entry names them,
// so they must be where a client downloads from.
const (
	releaseURL = "https://github.com/proxmoxsafe/proxmox-safe-mcp/releases/download/"
	imageName  = "ghcr.io/proxmoxsafe/proxmox-safe-mcp"
)

// stageBundle writes OUT/mcpb/<base>/: the bundle manifest for t and the
// binary under server/, ready for `mcpb pack DIR OUT/<base>.mcpb`.
func stageBundle(o options, t target, bin string) error {
	tmpl, err := os.ReadFile(filepath.Join(o.root, "release", "mcpb", "manifest.json"))
	if err != nil {
		return err
	}
	manifest := strings.NewReplacer(
		"{{VERSION}}", strings.TrimPrefix(o.version, "v"),
		"{{BINARY}}", t.binary(),
		"{{PLATFORM}}", t.mcpbPlatform(),
	).Replace(string(tmpl))
	if !json.Valid([]byte(manifest)) {
		return fmt.Errorf("release/mcpb/manifest.json is not valid JSON once filled in")
	}
	dir := filepath.Join(o.out, "mcpb", t.base(o.version))
	if err := os.MkdirAll(filepath.Join(dir, "server"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644); err != nil {
		return err
	}
	for _, f := range []string{"LICENSE", "README.md"} {
		b, err := os.ReadFile(filepath.Join(o.root, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "server", t.binary()), b, 0o755)
}

// finish is the second step, after `mcpb pack`: it adds the bundles to
// SHA256SUMS and writes OUT/server.json naming each bundle with its
// SHA-256 and the container image.
func finish(o options, targets []target) error {
	var bundles []string
	var packages []map[string]any
	for _, t := range targets {
		name := t.base(o.version) + ".mcpb"
		path := filepath.Join(o.bundles, name)
		sum, err := fileSHA256(path)
		if err != nil {
			return fmt.Errorf("bundle for %s/%s: %w (run mcpb pack first)", t.goos, t.goarch, err)
		}
		bundles = append(bundles, path)
		packages = append(packages, map[string]any{
			"registryType": "mcpb",
			"identifier":   releaseURL + o.version + "/" + name,
			"fileSha256":   sum,
			"transport":    map[string]any{"type": "stdio"},
		})
	}
	packages = append(packages, map[string]any{
		"registryType":         "oci",
		"identifier":           imageName + ":" + strings.TrimPrefix(o.version, "v"),
		"transport":            map[string]any{"type": "stdio"},
		"runtimeHint":          "docker",
		"environmentVariables": imageEnvironment(),
	})
	if err := writeSums(o.out, bundles); err != nil {
		return err
	}
	doc, err := serverJSON(o, packages)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, "server.json"), doc, 0o644)
}

// imageEnvironment is what the container needs to serve one client on
// stdio (the image serves HTTP unless told otherwise).
func imageEnvironment() []map[string]any {
	return []map[string]any{
		{"name": "MCP_TRANSPORT", "description": "Serve MCP on stdio (the image serves HTTP by default).", "value": "stdio"},
		{"name": "PVE_URL", "description": "The cluster's API address, e.g. https://pve1.example.com:8006.", "isRequired": true, "format": "string"},
		{"name": "PVE_API_TOKEN_ID", "description": "API token id, USER@REALM!TOKENNAME.", "isRequired": true, "format": "string"},
		{"name": "PVE_API_TOKEN_SECRET", "description": "The API token's secret.", "isRequired": true, "isSecret": true, "format": "string"},
		{"name": "PVE_TLS_FINGERPRINT", "description": "SHA-256 fingerprint of a self-signed cluster certificate.", "format": "string"},
		{"name": "PVE_ALLOWED_NODES", "description": "Comma-separated nodes that node reads and mutations may target.", "format": "string"},
	}
}

// serverJSON fills release/server.json with the version and packages.
func serverJSON(o options, packages []map[string]any) ([]byte, error) {
	tmpl, err := os.ReadFile(filepath.Join(o.root, "release", "server.json"))
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(tmpl, &doc); err != nil {
		return nil, fmt.Errorf("release/server.json: %w", err)
	}
	doc["version"] = strings.TrimPrefix(o.version, "v")
	doc["packages"] = packages
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
