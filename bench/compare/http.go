package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/benchutil"
)

var urlRe = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)

// httpCompare runs the same list_guests load against ours and the minimal
// server over streamable HTTP, one after the other, o.httpRounds times in
// an order rotated each round (a shared machine's load drifts: one run
// each can differ by a factor of two in calls/s), and compares the
// medians.
func httpCompare(ours string, oursEnv []string, minimal string, minEnv []string, o options) error {
	tok := make([]byte, 32)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	rounds := max(o.httpRounds, 1)
	fmt.Printf("| streamable HTTP, %d clients × %s, list_guests | calls ok | errors | calls/s | p50 | p99 | server CPU per call | clients' and fake's CPU per call |\n|---|---|---|---|---|---|---|---|\n", o.clients, o.duration)
	servers := []struct {
		name string
		bin  string
		args []string
		env  []string
	}{
		{"ours (--read-only)", ours, oursHTTPArgs, append(slices.Clone(oursEnv), "MCP_AUTH_TOKEN="+token)},
		{"minimal go-sdk server", minimal, []string{"-http", "127.0.0.1:0"}, minEnv},
	}
	results := make([][]*loadResult, len(servers))
	for r := range rounds {
		for _, i := range benchutil.RoundOrder(r, len(servers)) {
			s := servers[i]
			res, err := loadOne(s.bin, s.args, s.env, token, o)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			name := s.name
			if rounds > 1 {
				name = fmt.Sprintf("%s, round %d", s.name, r+1)
			}
			fmt.Printf("| %s | %d | %d | %.0f | %s | %s | %s | %s |\n", name, res.ok, res.errs, res.rate, round(res.p50), round(res.p99), cpuPerCall(res.cpu, res.ok), cpuPerCall(res.loadCPU, res.ok))
			if res.errs > 0 {
				return fmt.Errorf("%s: %d calls failed, first: %s", s.name, res.errs, res.first)
			}
			results[i] = append(results[i], res)
		}
	}
	ourMed, minMed := medianLoad(results[0]), medianLoad(results[1])
	if rounds > 1 {
		for i, med := range []loadSummary{ourMed, minMed} {
			fmt.Printf("| %s, median of %d | | | %.0f | %s | %s | %s | %s |\n", servers[i].name, rounds, med.rate, round(med.p50), round(med.p99), usPerCall(med.cpu), usPerCall(med.loadCPU))
		}
	}
	if minMed.rate > 0 && minMed.p99 > 0 {
		ratio := func(a, b float64) string {
			if a <= 0 || b <= 0 {
				return ""
			}
			return fmt.Sprintf("%.2f×", a/b)
		}
		fmt.Printf("| ours / minimal | | | %.2f× (target ≥ 0.95×) | %.2f× | %.2f× (target ≤ 1.1×) | %s | %s |\n", ourMed.rate/minMed.rate, float64(ourMed.p50)/float64(minMed.p50), float64(ourMed.p99)/float64(minMed.p99), ratio(ourMed.cpu, minMed.cpu), ratio(ourMed.loadCPU, minMed.loadCPU))
	}
	return nil
}

// loadSummary is the median of a server's runs, CPU per call in µs.
type loadSummary struct {
	rate, cpu, loadCPU float64
	p50, p99           time.Duration
}

func medianLoad(runs []*loadResult) loadSummary {
	var rate, cpu, loadCPU []float64
	var p50, p99 []time.Duration
	for _, r := range runs {
		rate, p50, p99 = append(rate, r.rate), append(p50, r.p50), append(p99, r.p99)
		if r.ok > 0 && r.cpu > 0 {
			cpu = append(cpu, float64(r.cpu.Microseconds())/float64(r.ok))
		}
		if r.ok > 0 && r.loadCPU > 0 {
			loadCPU = append(loadCPU, float64(r.loadCPU.Microseconds())/float64(r.ok))
		}
	}
	s := loadSummary{rate: benchutil.Median(rate), p50: benchutil.Median(p50), p99: benchutil.Median(p99)}
	if len(cpu) > 0 {
		s.cpu = benchutil.Median(cpu)
	}
	if len(loadCPU) > 0 {
		s.loadCPU = benchutil.Median(loadCPU)
	}
	return s
}

func usPerCall(us float64) string {
	if us <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f µs", us)
}

type loadResult struct {
	ok, errs int
	rate     float64
	p50, p99 time.Duration
	// cpu is the server process's CPU time over the load (after every
	// client connected, until the last call ended). Per call it is the
	// figure that means something on a shared machine, where calls/s and
	// latency follow the other tenants' load.
	cpu time.Duration
	// loadCPU is this process's CPU time over the same span: the clients
	// and the fake Proxmox, which share the machine with the server, so a
	// server whose answers cost its clients more serves fewer calls/s on
	// a busy machine even at the same CPU per call of its own.
	loadCPU time.Duration
	first   string
}

func cpuPerCall(cpu time.Duration, calls int) string {
	if cpu <= 0 || calls == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f µs", float64(cpu.Microseconds())/float64(calls))
}

// httpProfile writes a CPU profile of ours (built with the benchprofile
// tag) serving the HTTP load to dir/http-cpu.pprof, and prints the load's
// figures; read it with go tool pprof -top.
func httpProfile(ours string, oursEnv []string, o options) error {
	dir, err := filepath.Abs(o.profile)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tok := make([]byte, 32)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	env := append(slices.Clone(oursEnv), "MCP_AUTH_TOKEN="+token, "PROXMOX_SAFE_BENCH_CPUPROFILE="+filepath.Join(dir, "http-cpu.pprof"))
	res, err := loadOne(ours, oursHTTPArgs, env, token, o)
	if err != nil {
		return err
	}
	fmt.Printf("ours over HTTP, %d clients × %s: %d calls, %d errors, server CPU per call %s; profile in %s\n", o.clients, o.duration, res.ok, res.errs, cpuPerCall(res.cpu, res.ok), filepath.Join(dir, "http-cpu.pprof"))
	return nil
}

// oursHTTPArgs serve ours over HTTP as the comparison does.
var oursHTTPArgs = []string{"--read-only", "--http", "127.0.0.1:0", "--log-level", "info"}

func loadOne(bin string, args, env []string, token string, o options) (*loadResult, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	urlCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
				urlCh <- m[1]
				break
			}
		}
		// The rest unread: ours logs a line per call (the minimal server
		// none), and matching each against the pattern would take CPU
		// from the server measured, on the same cores, for ours alone.
		io.Copy(io.Discard, stderr)
	}()
	var url string
	select {
	case url = <-urlCh:
	case <-time.After(30 * time.Second):
		return nil, errors.New("the server did not report its address within 30s")
	}
	tr := &http.Transport{MaxIdleConns: 2 * o.clients, MaxIdleConnsPerHost: 2 * o.clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: benchutil.Bearer(token, tr)}
	var (
		mu        sync.Mutex
		lat       []time.Duration
		res       loadResult
		wg        sync.WaitGroup
		connected sync.WaitGroup
		start     = make(chan struct{})
		ctx       context.Context
		t0        time.Time
		call      = &mcp.CallToolParams{Name: "list_guests", Arguments: map[string]any{}}
	)
	fail := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		if res.errs == 0 {
			res.first = msg
		}
		res.errs++
	}
	connected.Add(o.clients)
	for range o.clients {
		wg.Go(func() {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "compare", Version: "0"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			connected.Done()
			if err != nil {
				fail("connect: " + err.Error())
				return
			}
			defer cs.Close()
			<-start
			for ctx.Err() == nil {
				s := time.Now()
				r, err := cs.CallTool(context.Background(), call)
				d := time.Since(s)
				switch {
				case err != nil:
					fail(err.Error())
				case r.IsError:
					fail("tool error")
				default:
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}
		})
	}
	// Sessions are set up before the clock and the CPU count start: the
	// figures are those of the calls alone.
	connected.Wait()
	cpu0, cpuOK := benchutil.ProcCPU(cmd.Process.Pid)
	self0, selfOK := benchutil.ProcCPU(os.Getpid())
	var cancel context.CancelFunc
	ctx, cancel = context.WithTimeout(context.Background(), o.duration)
	defer cancel()
	t0 = time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	if cpu1, ok := benchutil.ProcCPU(cmd.Process.Pid); ok && cpuOK {
		res.cpu = cpu1 - cpu0
	}
	if self1, ok := benchutil.ProcCPU(os.Getpid()); ok && selfOK {
		res.loadCPU = self1 - self0
	}
	slices.Sort(lat)
	res.ok = len(lat)
	res.rate = float64(len(lat)) / elapsed.Seconds()
	if len(lat) > 0 {
		res.p50, res.p99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return &res, nil
}
