// Command compare measures proxmox-safe-mcp against its baselines in one
// run and prints the ratios docs/PERFORMANCE.md sets targets for:
//
//   - tokens: the tool definitions each profile serves (compact JSON of
//     name, description and input schema; and the whole tools/list), and
//     the bytes per guest of one page of list_guests (tokens.go);
//
//   - trips: sequential round trips to Proxmox per operation with the
//     fake delaying every request (-trip-latency), counted from its
//     request log; wait: how long after its task's end a waited-for
//     snapshot answers (trips.go);
//
//   - cold start (process start → tools/list answered, and → exit on stdin
//     close) against a minimal go-sdk server with one tool (./minimal), and
//     against the floor (./floor: minimal plus what the project's fixed
//     dependencies cost at start: validator, go-cleanhttp, a TLS client,
//     slog), and against floor-imports (the floor built with -tags
//     floorimports: every package ours imports linked and initialized,
//     none used), which splits ours / floor into what our packages cost
//     by being in the binary and what ours does at start;
//
//   - per read call over stdio (list_guests, guest_status, cluster_status)
//     against replaying the very upstream requests the call made, as bare
//     keep-alive GETs decoded into any, and against the minimal server
//     making the same GET: all taking turns, -calls calls each per round
//     for -call-rounds rounds, wall and server CPU per call (percall.go);
//
//   - list_guests over 10,000 guests against one bare GET + decode of the
//     same /cluster/resources;
//
//   - streamable HTTP with N concurrent clients against the minimal server:
//     calls/s, latency and the server process's CPU time per call (the
//     figure to compare on a shared machine);
//
//   - idle RSS after tools/list and the binary size.
//
//     go run ./bench/compare                 # defaults: 15 cold starts, 10 rounds × 100 calls, 64 clients × 5 s
//     go run ./bench/compare -runs 20 -calls 200
//     go run ./bench/compare -only start -runs 3 -call-rounds 20   # mostly the per-call rows
//     go run ./bench/compare -only tokens,trips,wait   # the byte counts and round trips alone (seconds)
//     go run ./bench/compare -only instructions -calls 200   # guest_status's instructions per call, ours and minimal (callgrind, minutes)
//     go run ./bench/compare -only start -runs 3 -versus /tmp/before   # per call, this tree against a build of another
//     go run ./bench/compare -only http -http-rounds 5   # HTTP alone, medians of 5 alternated loads each
//     go run ./bench/compare -only http -profile DIR   # CPU profile of ours under the HTTP load
//
// Everything runs on loopback against an in-process proxmoxtest fake (TLS).
// Figures belong in docs/PERFORMANCE.md, never in a test assertion.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/benchutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

type options struct {
	runs, calls, clients int
	callRounds           int
	duration             time.Duration
	httpRounds           int
	skipHTTP, bigOnly    bool
	latency              time.Duration
	profile              string
	tripLatency          time.Duration
	only                 string
	oursBin              string
	callgrindOut         string
	versus               string
}

// sections are the parts of one run, in the order they print; -only
// picks some.
var sections = []string{"tokens", "trips", "wait", "start", "http"}

func (o options) does(section string) bool {
	return o.only == "" || o.named(section)
}

// named reports whether -only names section: the sections that run only
// when asked for (instructions: minutes under valgrind).
func (o options) named(section string) bool {
	return slices.Contains(strings.Split(o.only, ","), section)
}

func main() {
	var o options
	flag.IntVar(&o.runs, "runs", 15, "cold starts per server")
	flag.IntVar(&o.calls, "calls", 100, "calls per tool and server in each round of the per-call comparison (and the 10,000-guest list: calls/10 rounds)")
	flag.IntVar(&o.callRounds, "call-rounds", 10, "rounds of the per-call comparison: in each, ours, the minimal server and the bare GETs make -calls calls in turn (order rotated each round); rows give the medians over rounds and the median of the per-round ratios")
	flag.IntVar(&o.clients, "clients", 64, "concurrent HTTP clients")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "HTTP load duration per server")
	flag.IntVar(&o.httpRounds, "http-rounds", 1, "HTTP loads per server, alternating (order rotated each round); the comparison uses the medians")
	flag.DurationVar(&o.latency, "latency", 0, "delay every answer of the small fake by this much (a network round trip and Proxmox's own work: the in-process fake answers in microseconds, so without it several reads sent at once cannot beat the same reads in sequence on a busy machine)")
	flag.BoolVar(&o.skipHTTP, "skip-http", false, "skip the HTTP concurrency comparison")
	flag.BoolVar(&o.bigOnly, "big-only", false, "measure only list_guests over 10,000 guests (-calls/10 rounds)")
	flag.DurationVar(&o.tripLatency, "trip-latency", 25*time.Millisecond, "the fake's delay per request where round trips are counted and waits timed (trips, wait)")
	flag.StringVar(&o.only, "only", "", "run only these sections, comma-separated: "+strings.Join(sections, ", ")+" (start = cold start, per call, the 10,000-guest list, RSS); also instructions (not run unless named: guest_status's instructions per call, ours and minimal, -calls calls under valgrind's callgrind)")
	flag.StringVar(&o.oursBin, "ours", "", "measure this prebuilt proxmox-safe-mcp binary instead of building ./cmd/proxmox-safe-mcp, e.g. to compare two builds (with -profile: one built with -tags benchprofile)")
	flag.StringVar(&o.versus, "versus", "", "also run this prebuilt proxmox-safe-mcp binary in the per-call rounds, taking turns with ours, and print ours / it: a change measured under the same load as the build before it")
	flag.StringVar(&o.callgrindOut, "callgrind-out", "", "with -only instructions, keep callgrind's output files in this directory (callgrind_annotate reads them)")
	flag.StringVar(&o.profile, "profile", "", "instead of comparing, write CPU and allocation profiles of ours to this directory: each cold start, and one session of -calls list_guests calls (profile.go); with -only http, a CPU profile of ours serving the HTTP load (http.go)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// row is one line of the result table.
type row struct {
	what       string
	ours, base time.Duration
	target     float64 // 0: reported only
	// ratio, when set, is the median of per-round ratios (interleaved
	// measures), lo and hi the lowest and highest of them; else the
	// ratio is ours / base.
	ratio, lo, hi float64
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ours, minimal, floor := filepath.Join(dir, "proxmox-safe-mcp"), filepath.Join(dir, "minimal"), filepath.Join(dir, "floor")
	// floorImports is the floor with every package ours imports linked and
	// initialized, none used (floor/imports.go): it splits ours / floor
	// into what our packages cost by being in the binary and what ours
	// does at start.
	floorImports := filepath.Join(dir, "floor-imports")
	var tags []string
	if o.profile != "" {
		tags = []string{"-tags", "benchprofile"} // cmd/proxmox-safe-mcp/profile_hook.go
	}
	builds := map[string]string{ours: "./cmd/proxmox-safe-mcp", minimal: "./bench/compare/minimal", floor: "./bench/compare/floor"}
	if o.oursBin != "" {
		if ours, err = filepath.Abs(o.oursBin); err != nil {
			return err
		}
		delete(builds, filepath.Join(dir, "proxmox-safe-mcp"))
	}
	for bin, pkg := range builds {
		args := append(append([]string{"build"}, tags...), "-o", bin, pkg)
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s (run from the module root): %v\n%s", pkg, err, out)
		}
	}
	if out, err := exec.Command("go", "build", "-tags", "floorimports", "-o", floorImports, "./bench/compare/floor").CombinedOutput(); err != nil {
		return fmt.Errorf("go build -tags floorimports ./bench/compare/floor (run from the module root): %v\n%s", err, out)
	}

	small := smallCluster()
	fake := proxmoxtest.NewServer(small)
	defer fake.Close()
	if o.latency > 0 {
		fake.InjectFault(proxmoxtest.Fault{Latency: o.latency})
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, fake.CertificatePEM(), 0o600); err != nil {
		return err
	}
	env := func(f *proxmoxtest.Server, nodes string) []string {
		return []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
			"PVE_URL=" + f.URL, "PVE_API_TOKEN_ID=" + proxmoxtest.DefaultTokenID,
			"PVE_API_TOKEN_SECRET=" + proxmoxtest.DefaultTokenSecret, "PVE_TLS_FINGERPRINT=" + f.Fingerprint(),
			"PVE_ALLOWED_NODES=" + nodes,
			"PROXMOX_SAFE_AUDIT_LOG=" + filepath.Join(dir, "audit.jsonl"),
		}
	}
	oursEnv := env(fake, "pve1,pve2,pve3")
	minEnv := append(env(fake, ""), "PVE_CA_FILE="+caFile)
	if o.profile != "" && o.only == "http" {
		return httpProfile(ours, oursEnv, o)
	}
	if o.profile != "" {
		return profile(ours, oursEnv, env, o)
	}

	var rows []row
	fmt.Printf("bench/compare: %s, %d CPUs, %s, load average %s; cold starts ×%d (interleaved, order rotated each round), calls: %d rounds × %d (interleaved likewise), fake latency %v (trips and wait: %v)\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.Version(), benchutil.LoadAvg(), o.runs, o.callRounds, o.calls, o.latency, o.tripLatency)
	if o.does("tokens") {
		if err := definitionSizes(ours, env, fake); err != nil {
			return err
		}
		if err := guestListSizes(ours, env); err != nil {
			return err
		}
		if err := resultSizes(ours, env); err != nil {
			return err
		}
	}
	if o.does("trips") {
		if err := roundTrips(o.tripLatency); err != nil {
			return err
		}
	}
	if o.does("wait") {
		if err := waitOverhead(o.tripLatency, []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 1500 * time.Millisecond, 4 * time.Second}); err != nil {
			return err
		}
	}
	if o.named("instructions") {
		if err := instructionsPerCall(ours, oursEnv, minimal, minEnv, fake, small, o); err != nil {
			return err
		}
	}
	if !o.does("start") {
		if o.does("http") {
			fmt.Println()
			return httpCompare(ours, oursEnv, minimal, minEnv, o)
		}
		return nil
	}

	if o.bigOnly {
		bigRows, err := measureBig(ours, env, o)
		if err == nil {
			printTable(bigRows)
		}
		return err
	}

	// Cold start, interleaved so drift on a shared machine hits all four,
	// in an order rotated each round so that no server always goes first
	// in its round (a colder page cache, a scheduler wake-up) or last.
	servers := []struct {
		name, bin string
		env       []string
	}{{"ours", ours, oursEnv}, {"minimal", minimal, minEnv}, {"floor", floor, minEnv}, {"floor-imports", floorImports, minEnv}}
	firsts, exits, idles := make([][]time.Duration, len(servers)), make([][]time.Duration, len(servers)), make([]idleMem, len(servers))
	for i := range o.runs {
		for _, s := range benchutil.RoundOrder(i, len(servers)) {
			f, e, rss, err := coldStart(servers[s].bin, servers[s].env, i == o.runs-1)
			if err != nil {
				return fmt.Errorf("%s: %w", servers[s].name, err)
			}
			firsts[s], exits[s] = append(firsts[s], f), append(exits[s], e)
			if rss.text != "" {
				idles[s] = rss
			}
		}
	}
	oFirst, oExit, mFirst, mExit, fExit, fiExit := firsts[0], exits[0], firsts[1], exits[1], exits[2], exits[3]
	idle, idleMinimal, idleFloor, idleImports := idles[0], idles[1], idles[2], idles[3]
	rows = append(rows,
		row{what: "cold start: tools/list answered", ours: median(oFirst), base: median(mFirst), target: 0},
		row{what: "cold start: + exit on stdin close", ours: median(oExit), base: median(mExit), target: 0},
		row{what: "cold start: + exit, floor (minimal + validator, go-cleanhttp, TLS client, slog) / minimal (reference)", ours: median(fExit), base: median(mExit), target: 0},
		row{what: "cold start: + exit, ours / floor", ours: median(oExit), base: median(fExit), target: 1.15},
		row{what: "cold start: + exit, floor-imports (floor + every package ours imports, none used) / floor (reference)", ours: median(fiExit), base: median(fExit), target: 0},
		row{what: "cold start: + exit, ours / floor-imports (reference)", ours: median(oExit), base: median(fiExit), target: 0})

	// Per read call over stdio: ours, the minimal server and the bare
	// GETs taking turns (percall.go).
	callRows, err := perCallRows(ours, oursEnv, minimal, minEnv, fake, small, o)
	if err != nil {
		return err
	}
	rows = append(rows, callRows...)

	bigRows, err := measureBig(ours, env, o)
	if err != nil {
		return err
	}
	printTable(append(rows, bigRows...))
	fmt.Printf("\nbaselines: cold start = ./bench/compare/minimal (go-sdk, one tool) and ./bench/compare/floor (minimal + the fixed dependencies' start); per call = the same upstream GETs (in sequence; for several also at once, and the first alone), keep-alive, decoded into any, and the minimal server making the same GET; per-call ratios are the median of the per-round ratios (range in brackets), CPU from /proc/PID/task/*/schedstat\n")
	fmt.Printf("load average at the end: %s\n", benchutil.LoadAvg())
	fmt.Printf("idle memory after tools/list: ours %s; minimal %s; floor %s; floor-imports %s\n", idle.text, idleMinimal.text, idleFloor.text, idleImports.text)
	if idle.kB > 0 && idleFloor.kB > 0 {
		fmt.Printf("idle RSS, ours − floor: %.1f MiB (target ≤ 4 MiB)\n", float64(idle.kB-idleFloor.kB)/1024)
	}
	if idleImports.kB > 0 && idleFloor.kB > 0 {
		fmt.Printf("idle RSS, floor-imports − floor: %.1f MiB (our packages linked, none used); ours − floor-imports: %.1f MiB\n", float64(idleImports.kB-idleFloor.kB)/1024, float64(idle.kB-idleImports.kB)/1024)
	}
	for _, b := range []string{ours, minimal, floor, floorImports} {
		if st, err := os.Stat(b); err == nil {
			fmt.Printf("binary size %s: %.1f MiB\n", filepath.Base(b), float64(st.Size())/(1<<20))
		}
	}
	if o.skipHTTP || !o.does("http") {
		return nil
	}
	fmt.Println()
	return httpCompare(ours, oursEnv, minimal, minEnv, o)
}

func printTable(rows []row) {
	fmt.Println()
	fmt.Printf("| measure | ours | baseline | ratio | target |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		ratio := fmt.Sprintf("%.2f×", float64(r.ours)/float64(r.base))
		if r.ratio > 0 {
			ratio = fmt.Sprintf("%.2f× (rounds %.2f–%.2f)", r.ratio, r.lo, r.hi)
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", r.what, round(r.ours), round(r.base), ratio, targetText(r.target))
	}
}

// targetText is a row's target as the issue states it: every digit it
// has (1.15, not a rounded 1.1), at least one decimal (1.0), or "—" for
// none.
func targetText(target float64) string {
	if target <= 0 {
		return "—"
	}
	s := strconv.FormatFloat(target, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return "≤ " + s + "×"
}

func smallCluster() *proxmoxtest.Cluster {
	c := proxmoxtest.GenerateCluster(3, 4, 7)
	c.Guests = c.Guests[:10]
	c.Guests[9].Name = "big-" + strings.Repeat("n", 100<<10)
	return c
}

// rpc is a raw JSON-RPC stdio peer: the same client code drives both
// servers, so client overhead cancels out.
type rpc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func start(bin string, env []string) (*rpc, error) {
	cmd := exec.Command(bin)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &rpc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

func (r *rpc) call(method string, params any) (json.RawMessage, error) {
	r.id++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id, "method": method, "params": params})
	if _, err := r.in.Write(append(msg, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := r.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &resp) != nil || resp.ID == nil || *resp.ID != r.id {
			continue // a notification or log line
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, resp.Error)
		}
		return resp.Result, nil
	}
}

func (r *rpc) notify(method string) error {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	_, err := r.in.Write(append(msg, '\n'))
	return err
}

func (r *rpc) initialize() error {
	if _, err := r.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "compare", "version": "0"}}); err != nil {
		return err
	}
	return r.notify("notifications/initialized")
}

func (r *rpc) close() {
	r.in.Close()
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
}

// coldStart returns the time from process start to the answered tools/list
// and to the process's exit after stdin closes; withRSS also reads the idle
// memory after tools/list.
// idleMem is a server's idle memory: as printed, and its RSS in kB.
type idleMem struct {
	text string
	kB   int
}

func coldStart(bin string, env []string, withRSS bool) (first, exit time.Duration, rss idleMem, err error) {
	t0 := time.Now()
	r, err := start(bin, env)
	if err != nil {
		return 0, 0, idleMem{}, err
	}
	if err = r.initialize(); err == nil {
		_, err = r.call("tools/list", map[string]any{})
	}
	first = time.Since(t0)
	if err != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		return 0, 0, idleMem{}, err
	}
	if withRSS {
		// Idle: 1.5 s after tools/list, as a server a host started and
		// listed sits until its first call (ours' privilege check, its
		// first TLS connection, begins with that call).
		time.Sleep(1500 * time.Millisecond)
		hwm, now := benchutil.ProcMem(r.cmd.Process.Pid)
		anon, file := benchutil.ProcRSSSplit(r.cmd.Process.Pid)
		rss.text = fmt.Sprintf("RSS %s (anonymous %s, file-backed %s), peak %s", now, anon, file, hwm)
		fmt.Sscanf(now, "%d", &rss.kB)
	}
	r.in.Close()
	if err := r.cmd.Wait(); err != nil {
		return 0, 0, idleMem{}, fmt.Errorf("exit after stdin close: %w", err)
	}
	exit = time.Since(t0)
	if withRSS {
		exit = first // the sleep above is not part of the start
	}
	return first, exit, rss, nil
}

func startSession(bin string, env []string) (*rpc, error) {
	r, err := start(bin, env)
	if err != nil {
		return nil, err
	}
	if err := r.initialize(); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// upstreamGets makes 3 warm-up calls of tool, then one more, and returns
// the upstream GETs that one made, from the fake's request log.
func upstreamGets(r *rpc, fake *proxmoxtest.Server, tool string, args map[string]any) ([]string, error) {
	params := map[string]any{"name": tool, "arguments": args}
	for range 3 {
		if err := checkTool(r.call("tools/call", params)); err != nil {
			return nil, fmt.Errorf("%s: %w", tool, err)
		}
	}
	before := len(fake.Requests())
	if err := checkTool(r.call("tools/call", params)); err != nil {
		return nil, err
	}
	var gets []string
	for _, q := range fake.Requests()[before:] {
		if q.Path == "/access/permissions" {
			continue // ours' background privilege check, not the call's
		}
		if q.Method != http.MethodGet {
			return nil, fmt.Errorf("%s sent %s %s", tool, q.Method, q.Path)
		}
		u := q.RawPath
		if len(q.Query) > 0 {
			u += "?" + q.Query.Encode()
		}
		gets = append(gets, u)
	}
	return gets, nil
}

func checkTool(res json.RawMessage, err error) error {
	if err != nil {
		return err
	}
	var v struct {
		IsError bool `json:"isError"`
	}
	json.Unmarshal(res, &v)
	if v.IsError {
		return fmt.Errorf("tool error: %.300s", res)
	}
	return nil
}

func median(d []time.Duration) time.Duration { return benchutil.Median(d) }

func round(d time.Duration) time.Duration {
	switch {
	case d > 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
