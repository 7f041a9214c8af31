// Command httpload is a load check for the streamable HTTP transport: it
// starts proxmox-safe-mcp --demo --http on a free loopback port (with a
// random bearer token), runs N concurrent go-sdk clients doing read-only
// tool calls for a bounded time or number of calls, and reports throughput,
// latency percentiles, errors and the server's peak RSS (VmHWM from
// /proc/<pid>/status, so Linux only).
//
//	go run ./bench/httpload -clients 16 -duration 10s
//
// -flood-sessions and -slow-bodies replay two abuses instead (abuse.go).
//
// It only ever talks to 127.0.0.1 and the simulated cluster; it exits 1
// when any call failed. Figures belong in docs/PERFORMANCE.md, never in a
// test assertion.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/benchutil"
)

func main() {
	clients := flag.Int("clients", 16, "concurrent MCP client sessions")
	duration := flag.Duration("duration", 10*time.Second, "how long to run")
	maxCalls := flag.Int("calls", 0, "stop after this many calls in total (0: no limit, only -duration)")
	bin := flag.String("bin", "", "proxmox-safe-mcp binary to test (default: go build ./cmd/proxmox-safe-mcp)")
	stateless := flag.Bool("stateless", false, "run the server with --stateless")
	flag.Parse()
	if err := run(*clients, *duration, *maxCalls, *bin, *stateless); err != nil {
		fmt.Fprintln(os.Stderr, "httpload:", err)
		os.Exit(1)
	}
}

var urlRe = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// tools are the read calls each client cycles through.
var tools = []struct {
	name string
	args map[string]any
}{
	{"cluster_status", map[string]any{}},
	{"list_guests", map[string]any{}},
	{"node_status", map[string]any{"node": "pve1"}},
	{"list_guests", map[string]any{"tag": "web"}},
}

func run(nClients int, duration time.Duration, maxCalls int, bin string, stateless bool) error {
	if nClients < 1 {
		return errors.New("-clients must be at least 1")
	}
	if bin == "" {
		dir, err := os.MkdirTemp("", "httpload-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "proxmox-safe-mcp")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/proxmox-safe-mcp").CombinedOutput(); err != nil {
			return fmt.Errorf("go build (run from the module root): %v\n%s", err, out)
		}
	}
	tokBytes := make([]byte, 32)
	rand.Read(tokBytes)
	token := hex.EncodeToString(tokBytes)

	args := []string{"--demo", "--read-only", "--http", "127.0.0.1:0", "--log-level", "info"}
	if stateless {
		args = append(args, "--stateless")
	}
	args = append(args, strings.Fields(*serverArgs)...)
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "MCP_AUTH_TOKEN=" + token}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	urlCh := make(chan string, 1)
	var logTail strings.Builder
	var logMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := urlRe.FindStringSubmatch(line); m != nil {
				select {
				case urlCh <- m[1]:
				default:
				}
			}
			if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
				logMu.Lock()
				logTail.WriteString(line + "\n")
				logMu.Unlock()
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	var url string
	select {
	case url = <-urlCh:
	case <-time.After(30 * time.Second):
		return errors.New("the server did not report its address within 30s")
	}

	if abuseRequested() {
		return runAbuse(url, token, cmd.Process.Pid)
	}

	transport := &http.Transport{MaxIdleConns: 2 * nClients, MaxIdleConnsPerHost: 2 * nClients, IdleConnTimeout: time.Minute}
	defer transport.CloseIdleConnections()
	httpClient := &http.Client{Transport: benchutil.Bearer(token, transport)}

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      []string
		calls     int
		wg        sync.WaitGroup
	)
	budget := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if maxCalls > 0 && calls >= maxCalls {
			return false
		}
		calls++
		return true
	}
	start := time.Now()
	for i := range nClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "httpload", Version: "0"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				mu.Lock()
				errs = append(errs, "connect: "+err.Error())
				mu.Unlock()
				return
			}
			defer cs.Close()
			for n := i; ctx.Err() == nil && budget(); n++ {
				tool := tools[n%len(tools)]
				t0 := time.Now()
				// The call itself is not bounded by ctx: a call cut off by
				// the end of the run would count as an error.
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool.name, Arguments: tool.args})
				d := time.Since(t0)
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, tool.name+": "+err.Error())
				case res.IsError:
					errs = append(errs, tool.name+": tool error")
				default:
					latencies = append(latencies, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	hwm, rss := benchutil.ProcMem(cmd.Process.Pid)

	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(float64(len(latencies))*p))]
	}
	mode := "stateful"
	if stateless {
		mode = "stateless"
	}
	fmt.Printf("streamable HTTP load: %d clients, %s, %s, bearer auth, loopback, --demo --read-only\n", nClients, elapsed.Round(time.Millisecond), mode)
	fmt.Printf("  machine:     %d CPUs (GOMAXPROCS %d), %s/%s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("  calls:       %d ok, %d errors\n", len(latencies), len(errs))
	fmt.Printf("  throughput:  %.0f calls/s\n", float64(len(latencies))/elapsed.Seconds())
	fmt.Printf("  latency:     p50 %s, p99 %s, max %s\n", pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), pct(1).Round(10*time.Microsecond))
	fmt.Printf("  server RSS:  peak (VmHWM) %s, at end (VmRSS) %s\n", hwm, rss)
	logMu.Lock()
	if logTail.Len() > 0 {
		fmt.Printf("  server warnings/errors:\n%s", logTail.String())
	}
	logMu.Unlock()
	if len(errs) > 0 {
		for _, e := range errs[:min(5, len(errs))] {
			fmt.Fprintln(os.Stderr, "  error:", e)
		}
		return fmt.Errorf("%d calls failed", len(errs))
	}
	return nil
}
