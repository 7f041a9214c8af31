// Command release builds what a release of proxmox-safe-mcp publishes,
// from a clean checkout, with nothing but the Go toolchain:
//
//	go run ./release -version v0.1.0 [-out dist] [-targets linux/amd64,…]
//
// For every target it cross-compiles a static binary (CGO_ENABLED=0,
// -trimpath, no build id, the version stamped into main.version), packs it
// with LICENSE, README.md and CHANGELOG.md into an archive (.tar.gz, or
// .zip for Windows) whose bytes depend only on the inputs (sorted entries,
// fixed times and owners), and stages an MCP Bundle directory
// (manifest.json from release/mcpb/manifest.json plus server/<binary>)
// for `mcpb pack`. It writes SHA256SUMS over the archives. With -bundles
// DIR (the packed .mcpb files, after `mcpb pack`), it writes SHA256SUMS
// again over the archives, the SBOMs release.sh put beside them and the
// bundles, and writes server.json for the MCP Registry from
// release/server.json with each bundle's SHA-256.
//
// Why not GoReleaser: our needs are five targets, archives, checksums, a
// bundle manifest and a registry file; GoReleaser is a large tool with its
// own configuration language that CI would have to build or download on
// every run, while this program is a few hundred lines of standard library
// the tests cover. The SBOM comes from CycloneDX's own tool
// (cyclonedx-gomod), run by ci/release.sh.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// defaultTargets are the platforms a release ships.
var defaultTargets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "release version, e.g. v0.1.0 (required)")
	flag.StringVar(&o.out, "out", "dist", "output directory (created; must be empty or absent)")
	targets := flag.String("targets", strings.Join(defaultTargets, ","), "comma-separated GOOS/GOARCH list")
	flag.StringVar(&o.bundles, "bundles", "", "directory of packed .mcpb bundles: add them to SHA256SUMS and write server.json (second step)")
	flag.StringVar(&o.root, "root", ".", "repository root")
	validate := flag.String("validate-server", "", "only check this server.json against the registry schema (release/testdata/server.schema.json)")
	flag.Parse()
	if *validate != "" {
		if err := validateServerJSON(o.root, *validate); err != nil {
			fmt.Fprintln(os.Stderr, "release:", err)
			os.Exit(1)
		}
		fmt.Println(*validate, "matches the MCP Registry schema 2025-12-11")
		return
	}
	o.targets = strings.Split(*targets, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}
