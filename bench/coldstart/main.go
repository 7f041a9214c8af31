// Command coldstart times the cold start of several builds of an MCP stdio
// server side by side (issue 14): each run starts a binary, answers
// initialize and tools/list, closes stdin and waits for the exit, and the
// binaries take turns so that machine load hits each alike. It prints the
// median time to the initialize answer, to the tools/list answer, from
// stdin closed to the process reaped, and of the whole (list + exit), and,
// with -rss, the last run's idle memory (RSS split into anonymous and
// file-backed pages, threads) after -rss-wait.
//
// Every binary gets the same environment: one proxmoxtest fake over TLS
// (a 10-guest cluster), its fingerprint and CA file, an audit log in a
// temporary state directory. Build the versions to compare first, e.g.
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
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/benchutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func main() {
	runs := flag.Int("runs", 31, "cold starts per binary")
	rss := flag.Bool("rss", false, "print the last run's idle memory after -rss-wait")
	rssWait := flag.Duration("rss-wait", 1500*time.Millisecond, "how long after tools/list the idle memory is read (ours' privilege check begins 250 ms after the list)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: coldstart [-runs N] [-rss] BINARY...")
		os.Exit(2)
	}
	if err := run(flag.Args(), *runs, *rss, *rssWait); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

type times struct{ initialize, list, exit, total []time.Duration }

func run(bins []string, runs int, withRSS bool, rssWait time.Duration) error {
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
	fmt.Printf("coldstart: %s, %d runs each, interleaved\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), runs)
	res := make([]times, len(bins))
	for i := range runs {
		for b, bin := range bins {
			mem, err := once(bin, env, &res[b], withRSS && i == runs-1, rssWait)
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			if mem != "" {
				fmt.Printf("idle %s: %s\n", filepath.Base(bin), mem)
			}
		}
	}
	fmt.Printf("\n| binary | initialize answered | tools/list answered | stdin closed → exited | list + exit |\n|---|---|---|---|---|\n")
	for b, bin := range bins {
		r := res[b]
		fmt.Printf("| %s | %v | %v | %v | %v |\n", filepath.Base(bin), median(r.initialize), median(r.list), median(r.exit), median(r.total))
	}
	return nil
}

// once is one cold start of bin; withRSS reads its idle memory after
// rssWait (that run's times are not kept).
func once(bin string, env []string, t *times, withRSS bool, rssWait time.Duration) (mem string, err error) {
	cmd := exec.Command(bin)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	r := bufio.NewReaderSize(out, 1<<20)
	fail := func(err error) (string, error) {
		cmd.Process.Kill()
		cmd.Wait()
		return "", err
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
		_, now := benchutil.ProcMem(cmd.Process.Pid)
		anon, file := benchutil.ProcRSSSplit(cmd.Process.Pid)
		mem = fmt.Sprintf("RSS %s (anonymous %s, file-backed %s), threads %s, %v after tools/list", now, anon, file, threads(cmd.Process.Pid), rssWait)
	}
	closed := time.Now()
	in.Close()
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("exit after stdin close: %w", err)
	}
	if withRSS {
		return mem, nil
	}
	exit := time.Since(closed)
	t.initialize, t.list = append(t.initialize, ini), append(t.list, list)
	t.exit, t.total = append(t.exit, exit), append(t.total, list+exit)
	return "", nil
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

func threads(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "n/a"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "n/a"
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(10 * time.Microsecond)
}
