// Command soak runs many mixed tool calls against the built
// proxmox-safe-mcp binary in --demo mode and samples the server's memory
// and goroutines along the way, to show that neither grows with use
// (a long-running server must not leak):
//
//   - stdio: one session, -calls calls one after another;
//   - streamable HTTP: -clients sessions sharing -calls calls.
//
// The calls cycle through the read tools and a guest_power call without
// approval, which must be refused ("no action was taken"): a refusal is
// expected, anything else that fails is an error. At every -every calls it
// samples the server's RSS (VmRSS from /proc/<pid>/status), its OS threads
// and its goroutines. Goroutines are counted from the Go runtime's own
// scheduler trace (GODEBUG=schedtrace,scheddetail on the server's stderr:
// every goroutine not dead), so the binary needs no debug endpoint.
//
//	go run ./bench/soak                          # 10,000 calls each way, 32 HTTP clients
//	go run ./bench/soak -calls 2000 -every 200
//
// It talks to 127.0.0.1 and the simulated cluster only, gives up after
// -timeout, and exits 1 when any call failed. Linux only (/proc). Figures
// belong in docs/PERFORMANCE.md, never in a test assertion.
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/benchutil"
)

type options struct {
	calls, clients, every int
	bin                   string
	timeout               time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.calls, "calls", 10000, "tool calls per transport")
	flag.IntVar(&o.clients, "clients", 32, "concurrent HTTP client sessions")
	flag.IntVar(&o.every, "every", 1000, "sample the server every this many calls")
	flag.StringVar(&o.bin, "bin", "", "proxmox-safe-mcp binary (default: go build ./cmd/proxmox-safe-mcp)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long (each transport)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// call is one tool call of the mix; refused calls must fail with a
// refusal that says nothing was done.
type call struct {
	tool    string
	args    map[string]any
	refused bool
}

var mix = []call{
	{tool: "cluster_status"},
	{tool: "list_guests"},
	{tool: "node_status", args: map[string]any{"node": "pve1"}},
	{tool: "guest_status", args: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}},
	{tool: "guest_config", args: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}},
	{tool: "snapshot_list", args: map[string]any{"node": "pve1", "type": "lxc", "vmid": 200}},
	{tool: "task_list", args: map[string]any{"node": "pve1"}},
	{tool: "storage_list"},
	{tool: "list_guests", args: map[string]any{"tag": "web"}},
	{tool: "ha_status"},
	{tool: "guest_power", args: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}, refused: true},
}

func run(o options) error {
	if runtime.GOOS != "linux" {
		return errors.New("needs Linux (/proc)")
	}
	if o.calls < 1 || o.clients < 1 || o.every < 1 {
		return errors.New("-calls, -clients and -every must be positive")
	}
	if o.bin == "" {
		dir, err := os.MkdirTemp("", "soak-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.bin = filepath.Join(dir, "proxmox-safe-mcp")
		if out, err := exec.Command("go", "build", "-o", o.bin, "./cmd/proxmox-safe-mcp").CombinedOutput(); err != nil {
			return fmt.Errorf("go build (run from the module root): %v\n%s", err, out)
		}
	}
	fmt.Printf("soak: %s, %s/%s, GOMAXPROCS %d, %d calls per transport, mix of %d (1 refused mutation), sample every %d calls\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), o.calls, len(mix), o.every)
	var failed error
	for _, t := range []struct {
		name string
		fn   func(options) (*report, error)
	}{{"stdio, one session", soakStdio}, {fmt.Sprintf("streamable HTTP, %d sessions", o.clients), soakHTTP}} {
		r, err := t.fn(o)
		if r != nil {
			r.print(t.name)
		}
		if err != nil {
			failed = errors.Join(failed, fmt.Errorf("%s: %w", t.name, err))
		}
	}
	return failed
}

// server is a running proxmox-safe-mcp whose stderr carries the
// scheduler trace.
type server struct {
	cmd *exec.Cmd
	// goroutines is the live goroutine count of the last complete trace;
	// dumps counts the traces.
	goroutines atomic.Int64
	dumps      atomic.Int64
	// url is the HTTP endpoint once the server printed it.
	url chan string
	// logTail keeps warnings and errors the server logged.
	mu      sync.Mutex
	logTail []string
	done    chan struct{}
}

var (
	schedRe = regexp.MustCompile(`^SCHED \d+ms:`)
	gRe     = regexp.MustCompile(`^\s*G\d+: status=(\d+)`)
	urlRe   = regexp.MustCompile(`(http://127\.0\.0\.1:\d+/mcp)`)
)

// gDead is the runtime's _Gdead status: a goroutine that ended and waits
// for reuse.
const gDead = 6

func newServer(bin string, env []string, args ...string) *server {
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"GODEBUG=schedtrace=250,scheddetail=1"}, env...)
	return &server{cmd: cmd, url: make(chan string, 1), done: make(chan struct{})}
}

// watch reads the server's stderr: the trace, the address, the warnings.
func (s *server) watch(stderr io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	live, inDump := int64(0), false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case schedRe.MatchString(line):
			if inDump {
				s.goroutines.Store(live)
				s.dumps.Add(1)
			}
			live, inDump = 0, true
		case gRe.MatchString(line):
			if st, _ := strconv.Atoi(gRe.FindStringSubmatch(line)[1]); st != gDead {
				live++
			}
		case strings.HasPrefix(line, "  M") || strings.HasPrefix(line, "  P"):
		default:
			if m := urlRe.FindStringSubmatch(line); m != nil {
				select {
				case s.url <- m[1]:
				default:
				}
			}
			if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") || strings.Contains(line, "panic") {
				s.mu.Lock()
				if len(s.logTail) < 20 {
					s.logTail = append(s.logTail, line)
				}
				s.mu.Unlock()
			}
		}
	}
}

// sample reads the server's RSS (MiB) and OS thread count.
func (s *server) sample() (rssMiB float64, threads int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for l := range strings.Lines(string(b)) {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			kb, _ := strconv.Atoi(f[1])
			rssMiB = float64(kb) / 1024
		case "Threads:":
			threads, _ = strconv.Atoi(f[1])
		}
	}
	return rssMiB, threads
}

// report is one transport's run.
type report struct {
	samples   []sample
	calls     int
	refusals  int
	errs      []string
	latencies []time.Duration
	elapsed   time.Duration
	logTail   []string
}

type sample struct {
	calls      int
	at         time.Duration
	rssMiB     float64
	goroutines int64
	threads    int
}

// recorder collects results from any number of goroutines and samples
// the server at every o.every calls.
type recorder struct {
	o     options
	srv   *server
	start time.Time
	mu    sync.Mutex
	r     report
}

func (rec *recorder) take() {
	rss, th := rec.srv.sample()
	rec.r.samples = append(rec.r.samples, sample{calls: rec.r.calls, at: time.Since(rec.start), rssMiB: rss, goroutines: rec.srv.goroutines.Load(), threads: th})
}

func (rec *recorder) record(c call, res *mcp.CallToolResult, err error, d time.Duration) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.r.calls++
	switch {
	case err != nil:
		rec.r.errs = append(rec.r.errs, c.tool+": "+err.Error())
	case c.refused != res.IsError:
		rec.r.errs = append(rec.r.errs, fmt.Sprintf("%s: isError=%v, want %v: %s", c.tool, res.IsError, c.refused, firstText(res)))
	case c.refused && !strings.Contains(firstText(res), "no action was taken"):
		rec.r.errs = append(rec.r.errs, c.tool+": a refusal that does not say nothing was done: "+firstText(res))
	case c.refused:
		rec.r.refusals++
	default:
		rec.r.latencies = append(rec.r.latencies, d)
	}
	if rec.r.calls%rec.o.every == 0 {
		rec.take()
	}
}

func firstText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if t, ok := res.Content[0].(*mcp.TextContent); ok {
		return t.Text
	}
	return ""
}

// begin waits for two scheduler traces of the started, initialized
// server and takes the baseline sample.
func (rec *recorder) begin() error {
	deadline := time.Now().Add(30 * time.Second)
	for want := rec.srv.dumps.Load() + 2; rec.srv.dumps.Load() < want; {
		if time.Now().After(deadline) {
			return errors.New("no scheduler trace from the server within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	rec.start = time.Now()
	rec.take()
	return nil
}

func (rec *recorder) finish(srv *server) *report {
	rec.r.elapsed = time.Since(rec.start)
	// A last sample after the load, once the trace caught up.
	time.Sleep(600 * time.Millisecond)
	rec.take()
	srv.mu.Lock()
	rec.r.logTail = slices.Clone(srv.logTail)
	srv.mu.Unlock()
	return &rec.r
}

func soakStdio(o options) (*report, error) {
	srv := newServer(o.bin, nil, "--demo", "--log-level", "warn")
	stderr, err := srv.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "0"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: srv.cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	go srv.watch(stderr)
	defer func() {
		cs.Close() // closes stdin: the server exits
		<-srv.done
	}()
	rec := &recorder{o: o, srv: srv}
	if err := rec.begin(); err != nil {
		return nil, err
	}
	for i := range o.calls {
		if ctx.Err() != nil {
			return rec.finish(srv), fmt.Errorf("stopped after %d calls: %w", i, ctx.Err())
		}
		c := mix[i%len(mix)]
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		rec.record(c, res, err, time.Since(t0))
	}
	return rec.finish(srv), rec.r.failure()
}

func soakHTTP(o options) (*report, error) {
	tok := make([]byte, 32)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	srv := newServer(o.bin, []string{"MCP_AUTH_TOKEN=" + token}, "--demo", "--http", "127.0.0.1:0", "--log-level", "warn")
	stderr, err := srv.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := srv.cmd.Start(); err != nil {
		return nil, err
	}
	go srv.watch(stderr)
	defer func() {
		srv.cmd.Process.Signal(syscall.SIGTERM)
		srv.cmd.Wait()
		<-srv.done
	}()
	var url string
	select {
	case url = <-srv.url:
	case <-time.After(30 * time.Second):
		return nil, errors.New("the server did not print its address within 30s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	transport := &http.Transport{MaxIdleConnsPerHost: 2 * o.clients, IdleConnTimeout: time.Minute}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: benchutil.Bearer(token, transport)}
	rec := &recorder{o: o, srv: srv}
	if err := rec.begin(); err != nil {
		return nil, err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range o.clients {
		wg.Go(func() {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "0"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
			if err != nil {
				rec.mu.Lock()
				rec.r.errs = append(rec.r.errs, "connect: "+err.Error())
				rec.mu.Unlock()
				return
			}
			defer cs.Close()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(o.calls) {
					return
				}
				c := mix[int(i)%len(mix)]
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				rec.record(c, res, err, time.Since(t0))
			}
		})
	}
	wg.Wait()
	// The sessions are closed; drop the kept-alive connections too, so
	// the last sample shows what the server keeps once its clients left.
	transport.CloseIdleConnections()
	if ctx.Err() != nil {
		return rec.finish(srv), fmt.Errorf("stopped: %w", ctx.Err())
	}
	return rec.finish(srv), rec.r.failure()
}

func (r *report) failure() error {
	if len(r.errs) > 0 {
		return fmt.Errorf("%d of %d calls failed; first: %s", len(r.errs), r.calls, r.errs[0])
	}
	return nil
}

func (r *report) print(name string) {
	fmt.Printf("== %s\n", name)
	fmt.Printf("%8s %9s %9s %11s %8s\n", "calls", "elapsed", "RSS MiB", "goroutines", "threads")
	for _, s := range r.samples {
		fmt.Printf("%8d %8.1fs %9.1f %11d %8d\n", s.calls, s.at.Seconds(), s.rssMiB, s.goroutines, s.threads)
	}
	slices.Sort(r.latencies)
	pct := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[min(len(r.latencies)-1, int(float64(len(r.latencies))*p))].Round(10 * time.Microsecond)
	}
	rate := 0.0
	if r.elapsed > 0 {
		rate = float64(r.calls) / r.elapsed.Seconds()
	}
	fmt.Printf("calls %d in %s (%.0f/s), refused as expected %d, errors %d; read latency p50 %s, p99 %s, max %s\n",
		r.calls, r.elapsed.Round(time.Millisecond), rate, r.refusals, len(r.errs), pct(0.5), pct(0.99), pct(1))
	if n := len(r.samples); n >= 3 {
		// Growth after warm-up: from the first sample under load to the last.
		a, b := r.samples[1], r.samples[n-1]
		fmt.Printf("after warm-up (call %d → end): RSS %+.1f MiB, goroutines %+d, threads %+d\n",
			a.calls, b.rssMiB-a.rssMiB, b.goroutines-a.goroutines, b.threads-a.threads)
	}
	for i, e := range r.errs {
		if i == 5 {
			fmt.Printf("  … %d more errors\n", len(r.errs)-5)
			break
		}
		fmt.Println("  error:", e)
	}
	for _, l := range r.logTail {
		fmt.Println("  server log:", l)
	}
	fmt.Println()
}
