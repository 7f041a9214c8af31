package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// options are the command's flags.
type options struct {
	version string
	out     string
	root    string
	targets []string
	bundles string
}

// versionPattern is a semantic version with the leading v Go tags use.
const versionPattern = `^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`

// extraFiles go into every archive beside the binary.
var extraFiles = []string{"LICENSE", "README.md", "CHANGELOG.md"}

// target is one GOOS/GOARCH pair.
type target struct{ goos, goarch string }

func parseTarget(s string) (target, error) {
	goos, goarch, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || goos == "" || goarch == "" {
		return target{}, fmt.Errorf("target %q: want GOOS/GOARCH, e.g. linux/amd64", s)
	}
	return target{goos, goarch}, nil
}

func (t target) binary() string {
	if t.goos == "windows" {
		return "proxmox-safe-mcp.exe"
	}
	return "proxmox-safe-mcp"
}

// mcpbPlatform is the bundle manifest's name for the OS.
func (t target) mcpbPlatform() string {
	if t.goos == "windows" {
		return "win32"
	}
	return t.goos
}

// base is the file name stem of everything built for t:
// proxmox-safe-mcp_0.1.0_linux_amd64.
func (t target) base(version string) string {
	return "proxmox-safe-mcp_" + strings.TrimPrefix(version, "v") + "_" + t.goos + "_" + t.goarch
}

func (t target) archiveName(version string) string {
	if t.goos == "windows" {
		return t.base(version) + ".zip"
	}
	return t.base(version) + ".tar.gz"
}

func run(o options) error {
	if ok, _ := regexp.MatchString(versionPattern, o.version); !ok {
		return fmt.Errorf("-version %q is not a version like v0.1.0", o.version)
	}
	var targets []target
	for _, s := range o.targets {
		t, err := parseTarget(s)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	if o.bundles != "" {
		return finish(o, targets)
	}
	if entries, err := os.ReadDir(o.out); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new directory; nothing was built", o.out)
	}
	when, err := sourceTime(o.root)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if err := buildTarget(o, t, when); err != nil {
			return fmt.Errorf("%s/%s: %w", t.goos, t.goarch, err)
		}
	}
	return writeSums(o.out, nil)
}

// sourceTime is the time every archive entry carries: SOURCE_DATE_EPOCH
// when set (the reproducible-builds convention), else the commit's time,
// so that two builds of one commit give the same bytes.
func sourceTime(root string) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", s)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%ct").Output()
	if err != nil {
		return time.Time{}, errors.New("no SOURCE_DATE_EPOCH and no git commit to take the time from")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("git gave the commit time %q", out)
	}
	return time.Unix(n, 0).UTC(), nil
}

// buildTarget compiles t's binary, archives it and stages its bundle.
func buildTarget(o options, t target, when time.Time) error {
	bin := filepath.Join(o.out, "build", t.goos+"_"+t.goarch, t.binary())
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -buildid= -X main.version="+o.version,
		"-o", bin, "./cmd/proxmox-safe-mcp")
	cmd.Dir = o.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch, "GOFLAGS=-mod=readonly")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	files := []archived{{name: t.binary(), path: bin, mode: 0o755}}
	for _, f := range extraFiles {
		files = append(files, archived{name: f, path: filepath.Join(o.root, f), mode: 0o644})
	}
	dir := t.base(o.version)
	var data []byte
	var err error
	if t.goos == "windows" {
		data, err = zipArchive(dir, files, when)
	} else {
		data, err = tarGz(dir, files, when)
	}
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, t.archiveName(o.version)), data, 0o644); err != nil {
		return err
	}
	return stageBundle(o, t, bin)
}

// archived is one file of an archive.
type archived struct {
	name string // inside the archive's top directory
	path string // where it is now
	mode int64
}

// tarGz packs files under dir/ with fixed owners and times, in the given
// order, gzip without a name or time: the bytes depend only on the inputs.
func tarGz(dir string, files []archived, when time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	hdr := &tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: when, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: dir + "/" + f.name, Mode: f.mode, Size: int64(len(b)), ModTime: when, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(b); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipArchive is tarGz's counterpart for Windows.
func zipArchive(dir string, files []archived, when time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, err
		}
		h := &zip.FileHeader{Name: dir + "/" + f.name, Method: zip.Deflate, Modified: when}
		h.SetMode(os.FileMode(f.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(b); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sumSuffixes are the endings of the files in the output directory that
// SHA256SUMS lists: the archives, and the SBOMs release.sh writes there
// between the two steps.
var sumSuffixes = []string{".tar.gz", ".zip", ".sbom.cdx.json"}

// writeSums writes SHA256SUMS over the archives and SBOMs in dir plus
// extra files (paths), in the format `sha256sum -c` reads, sorted by name.
func writeSums(dir string, extra []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var paths []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && slices.ContainsFunc(sumSuffixes, func(suf string) bool { return strings.HasSuffix(n, suf) }) {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	paths = append(paths, extra...)
	type sum struct{ name, hex string }
	var sums []sum
	for _, p := range paths {
		h, err := fileSHA256(p)
		if err != nil {
			return err
		}
		sums = append(sums, sum{filepath.Base(p), h})
	}
	slices.SortFunc(sums, func(a, b sum) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	for _, s := range sums {
		fmt.Fprintf(&b, "%s  %s\n", s.hex, s.name)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
