package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestArchivesAreReproducible(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "proxmox-safe-mcp")
	if err := os.WriteFile(bin, []byte("binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	files := []archived{{name: "proxmox-safe-mcp", path: bin, mode: 0o755}}
	when := time.Unix(1764547200, 0).UTC()
	for _, pack := range []func(string, []archived, time.Time) ([]byte, error){tarGz, zipArchive} {
		a, err := pack("top", files, when)
		if err != nil {
			t.Fatal(err)
		}
		// Same inputs an hour later, with the file touched: same bytes.
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(bin, later, later); err != nil {
			t.Fatal(err)
		}
		b, err := pack("top", files, when)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Error("two archives of the same inputs differ")
		}
	}
}

func TestTarGzHoldsTheFilesUnderOneDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "b")
	lic := filepath.Join(dir, "l")
	os.WriteFile(bin, []byte("binary"), 0o600)
	os.WriteFile(lic, []byte("licence"), 0o600)
	when := time.Unix(1764547200, 0).UTC()
	data, err := tarGz("proxmox-safe-mcp_0.1.0_linux_amd64", []archived{{"proxmox-safe-mcp", bin, 0o755}, {"LICENSE", lic, 0o644}}, when)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header carries name %q / time %v: not reproducible", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(when) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: time %v uid %d gid %d uname %q, want the source time and no owner", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname)
		}
		got = append(got, h.Name+" "+h.FileInfo().Mode().Perm().String())
	}
	want := "proxmox-safe-mcp_0.1.0_linux_amd64/ -rwxr-xr-x,proxmox-safe-mcp_0.1.0_linux_amd64/proxmox-safe-mcp -rwxr-xr-x,proxmox-safe-mcp_0.1.0_linux_amd64/LICENSE -rw-r--r--"
	if strings.Join(got, ",") != want {
		t.Errorf("entries:\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}

func TestZipKeepsTheExecutableBit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "b")
	os.WriteFile(bin, []byte("binary"), 0o600)
	data, err := zipArchive("top", []archived{{"proxmox-safe-mcp.exe", bin, 0o755}}, time.Unix(1764547200, 0))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != "top/proxmox-safe-mcp.exe" || zr.File[0].Mode().Perm() != 0o755 {
		t.Fatalf("zip entries: %+v", zr.File)
	}
}

func TestNamesPerTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ target, archive, binary, platform string }{
		{"linux/amd64", "proxmox-safe-mcp_0.1.0_linux_amd64.tar.gz", "proxmox-safe-mcp", "linux"},
		{"darwin/arm64", "proxmox-safe-mcp_0.1.0_darwin_arm64.tar.gz", "proxmox-safe-mcp", "darwin"},
		{"windows/amd64", "proxmox-safe-mcp_0.1.0_windows_amd64.zip", "proxmox-safe-mcp.exe", "win32"},
	} {
		tg, err := parseTarget(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.archiveName("v0.1.0"); got != tc.archive {
			t.Errorf("%s archive %q, want %q", tc.target, got, tc.archive)
		}
		if tg.binary() != tc.binary || tg.mcpbPlatform() != tc.platform {
			t.Errorf("%s: binary %q platform %q", tc.target, tg.binary(), tg.mcpbPlatform())
		}
	}
	if _, err := parseTarget("linux"); err == nil {
		t.Error("a target without GOARCH was accepted")
	}
}

func TestRunRefusesABadVersionOrAFullDirectory(t *testing.T) {
	t.Parallel()
	if err := run(options{version: "1.0", out: t.TempDir(), targets: defaultTargets}); err == nil || !strings.Contains(err.Error(), "not a version") {
		t.Errorf("version 1.0: %v", err)
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o600)
	if err := run(options{version: "v0.1.0", out: full, root: "..", targets: defaultTargets}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("full directory: %v", err)
	}
}

func TestWriteSumsIsSha256sumFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.tar.gz"), []byte("b"), 0o600)
	os.WriteFile(filepath.Join(dir, "a.zip"), []byte("a"), 0o600)
	os.WriteFile(filepath.Join(dir, "c.sbom.cdx.json"), []byte("c"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600)
	if err := writeSums(dir, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.zip\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.tar.gz\n" +
		"2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6  c.sbom.cdx.json\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, want)
	}
}
