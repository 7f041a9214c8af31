// Command coldstart times the cold start of several builds of an MCP stdio
// server side by side: each run starts a binary, answers
// initialize and tools/list, closes stdin and waits for the exit, and the
// binaries take turns so that machine load hits each alike (in an order
// rotated each round, so that each takes each place in a round alike). It
// prints the median time to the initialize answer, to the tools/list
// answer, from stdin closed to the process reaped, and of the whole (list
// + exit), the process's minor page faults and CPU time (user + system,
// from wait4), each binary's whole cold start as a ratio to every other's,
// and, with -rss, the idle memory (RSS split into anonymous and
// file-backed pages, threads) -rss-wait after tools/list, median of the
// last -rss-runs runs.
//
// Every binary gets the same environment: one proxmoxtest fake over TLS
// (a 10-guest cluster), its fingerprint and CA file, an audit log in a
// temporary state directory.
//
// With no binary named, it builds the three the cold-start targets compare, from the module
// root and compares them: ours (./cmd/proxmox-safe-mcp), minimal (the
// smallest go-sdk server with one tool, ./bench/compare/minimal) and floor
// (minimal plus what the mandated dependencies cost at start: validator,
// go-cleanhttp, a TLS client, slog; ./bench/compare/floor), and a fourth
// that splits ours / floor in two, floor-imports (the floor built with
// -tags floorimports: every package ours imports linked and initialized,
// none used). With -release all four are built as the release builds
// (release/build.go: a static binary, CGO_ENABLED=0, -trimpath, -s -w),
// which is what a user of a downloaded binary or the image starts:
//
//	go run ./bench/coldstart -runs 101 -rss
//	go run ./bench/coldstart -runs 101 -rss -release
//
// To compare versions of ours, build them first, e.g.
//
//	git worktree add /tmp/old <commit> && (cd /tmp/old && go build -o /tmp/old.bin ./cmd/proxmox-safe-mcp)
//	go build -o /tmp/new.bin ./cmd/proxmox-safe-mcp && go build -o /tmp/minimal ./bench/compare/minimal
//	go run ./bench/coldstart -runs 101 -rss /tmp/old.bin /tmp/new.bin /tmp/minimal
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/benchutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func main() {
	runs := flag.Int("runs", 31, "cold starts per binary")
	rss := flag.Bool("rss", false, "print the idle memory -rss-wait after tools/list")
	rssRuns := flag.Int("rss-runs", 5, "with -rss: read the idle memory in this many of the last runs per binary (their times are not kept) and print the median")
	pages := flag.Int("pages", 0, "with -rss: also print which pages of each binary's own file are resident (by section, and the N packages of .text with the most), from its last run")
	rssWait := flag.Duration("rss-wait", 1500*time.Millisecond, "how long after tools/list the idle memory is read (ours' privilege check begins with the first tools/call, which this never sends)")
	release := flag.Bool("release", false, "with no binary named: build the four as the release does (static, CGO_ENABLED=0, -trimpath, -ldflags=-s -w)")
	flag.Parse()
	bins := flag.Args()
	if len(bins) == 0 {
		dir, err := os.MkdirTemp("", "coldstart-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "coldstart:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
		if bins, err = build(dir, *release); err != nil {
			fmt.Fprintln(os.Stderr, "coldstart:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	if !*rss {
		*rssRuns = 0
	}
	if err := run(bins, *runs, min(*rssRuns, *runs), *rssWait, *pages); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

// build builds ours, minimal, floor and floor-imports into dir (run from
// the module root); release: with the release's flags.
func build(dir string, release bool) ([]string, error) {
	var bins []string
	for _, b := range []struct{ name, pkg, tags string }{
		{"ours", "./cmd/proxmox-safe-mcp", ""}, {"minimal", "./bench/compare/minimal", ""},
		{"floor", "./bench/compare/floor", ""}, {"floor-imports", "./bench/compare/floor", "floorimports"},
	} {
		bin := filepath.Join(dir, b.name)
		args := []string{"build", "-o", bin}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		if release {
			cmd = exec.Command("go", append(args[:len(args):len(args)], "-trimpath", "-ldflags=-s -w", b.pkg)...)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s (run from the module root): %v\n%s", b.pkg, err, out)
		}
		bins = append(bins, bin)
	}
	return bins, nil
}

type times struct {
	initialize, list, exit, total, cpu []time.Duration
	faults                             []int64
	anon, file, threads                []int64 // idle memory (kB) and threads of the -rss runs
	pages                              *residency
}

func run(bins []string, runs, rssRuns int, rssWait time.Duration, pages int) error {
	dir, err := os.MkdirTemp("", "coldstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c := proxmoxtest.GenerateCluster(3, 4, 7)
	c.Guests = c.Guests[:10]
	fake := proxmoxtest.NewServer(c)
	defer fake.Close()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, fake.CertificatePEM(), 0o600); err != nil {
		return err
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"PVE_URL=" + fake.URL, "PVE_API_TOKEN_ID=" + proxmoxtest.DefaultTokenID,
		"PVE_API_TOKEN_SECRET=" + proxmoxtest.DefaultTokenSecret, "PVE_TLS_FINGERPRINT=" + fake.Fingerprint(),
		"PVE_CA_FILE=" + ca, "PVE_ALLOWED_NODES=pve1,pve2,pve3",
		"PROXMOX_SAFE_AUDIT_LOG=" + filepath.Join(dir, "audit.jsonl"),
	}
	fmt.Printf("coldstart: %s, %d runs each, interleaved (order rotated each round); load average %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), runs, loadavg())
	res := make([]times, len(bins))
	for i := range runs {
		// Rotated so that no binary always goes first in its round (a
		// colder page cache, a scheduler wake-up) or last.
		for _, b := range benchutil.RoundOrder(i, len(bins)) {
			if err := once(bins[b], env, &res[b], i >= runs-rssRuns, rssWait, pages > 0); err != nil {
				return fmt.Errorf("%s: %w", bins[b], err)
			}
		}
	}
	fmt.Printf("load average after: %s\n", loadavg())
	fmt.Printf("\n| binary | initialize answered | tools/list answered | stdin closed → exited | list + exit | minor faults | CPU (user+sys) |\n|---|---|---|---|---|---|---|\n")
	for b, bin := range bins {
		r := res[b]
		fmt.Printf("| %s | %v | %v | %v | %v | %d | %v |\n", filepath.Base(bin), median(r.initialize), median(r.list), median(r.exit), median(r.total), benchutil.Median(r.faults), median(r.cpu))
	}
	if len(bins) > 1 {
		fmt.Printf("\nlist + exit, row / column: ratio of the medians (median of the per-run ratios, which slow drift of the load cancels from):\n\n|")
		for _, bin := range bins {
			fmt.Printf(" | / %s", filepath.Base(bin))
		}
		fmt.Printf(" |\n|---%s|\n", strings.Repeat("|---", len(bins)))
		for a, abin := range bins {
			fmt.Printf("| %s", filepath.Base(abin))
			for b := range bins {
				fmt.Printf(" | %.2f× (%.2f×)", float64(median(res[a].total))/float64(median(res[b].total)), pairedRatio(res[a].total, res[b].total))
			}
			fmt.Printf(" |\n")
		}
	}
	if rssRuns > 0 {
		fmt.Printf("\nidle memory %v after tools/list, median of %d runs (kB from /proc/PID/status):\n\n| binary | RSS | anonymous | file-backed | threads |\n|---|---|---|---|---|\n", rssWait, rssRuns)
		for b, bin := range bins {
			r := res[b]
			anon, file := benchutil.Median(r.anon), benchutil.Median(r.file)
			fmt.Printf("| %s | %.1f MiB | %.1f MiB | %.1f MiB | %d |\n", filepath.Base(bin), mib(anon+file), mib(anon), mib(file), benchutil.Median(r.threads))
		}
	}
	for b, bin := range bins {
		if res[b].pages != nil {
			res[b].pages.print(filepath.Base(bin), pages)
		}
	}
	return nil
}

// once is one cold start of bin; withRSS reads its idle memory after
// rssWait (and, withPages, which of its file's pages are resident)
// instead of keeping that run's times.
func once(bin string, env []string, t *times, withRSS bool, rssWait time.Duration, withPages bool) (err error) {
	cmd := exec.Command(bin)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(out, 1<<20)
	fail := func(err error) error {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	if err := call(in, r, 1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"coldstart","version":"0"}}`); err != nil {
		return fail(err)
	}
	ini := time.Since(t0)
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		return fail(err)
	}
	if err := call(in, r, 2, "tools/list", `{}`); err != nil {
		return fail(err)
	}
	list := time.Since(t0)
	if withRSS {
		time.Sleep(rssWait)
		anon, file := benchutil.ProcRSSSplit(cmd.Process.Pid)
		t.anon, t.file = append(t.anon, kB(anon)), append(t.file, kB(file))
		t.threads = append(t.threads, threads(cmd.Process.Pid))
		if withPages {
			if t.pages, err = readResidency(cmd.Process.Pid, bin); err != nil {
				return fail(err)
			}
		}
	}
	closed := time.Now()
	in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("exit after stdin close: %w", err)
	}
	if withRSS {
		return nil
	}
	exit := time.Since(closed)
	t.initialize, t.list = append(t.initialize, ini), append(t.list, list)
	t.exit, t.total = append(t.exit, exit), append(t.total, list+exit)
	t.cpu = append(t.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.faults = append(t.faults, ru.Minflt)
	}
	return nil
}

// call sends one request and reads lines until its answer.
func call(w io.Writer, r *bufio.Reader, id int, method, params string) error {
	if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		return err
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		var resp struct {
			ID    *int            `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &resp) != nil || resp.ID == nil || *resp.ID != id {
			continue
		}
		if resp.Error != nil {
			return fmt.Errorf("%s: %s", method, resp.Error)
		}
		return nil
	}
}

func threads(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// kB parses "1234 kB" as /proc prints it; 0 for "n/a".
func kB(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(s, "kB")), 10, 64)
	return n
}

func mib(kb int64) float64 { return float64(kb) / 1024 }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

func median(d []time.Duration) time.Duration {
	return benchutil.Median(d).Round(10 * time.Microsecond)
}

// pairedRatio is the median of a[i]/b[i]: runs of the same round took
// turns within a few tens of milliseconds.
func pairedRatio(a, b []time.Duration) float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		r = append(r, float64(a[i])/float64(b[i]))
	}
	return benchutil.Median(r)
}
