package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// instructionsPerCall counts the instructions one guest_status call costs
// ours and the minimal server making the same GET, with valgrind's
// callgrind: each server runs twice under it, once making a few warm-up
// calls and once as many plus o.calls, and the difference over o.calls is
// a call's cost, the start and exit taken out. Unlike time (wall or CPU),
// a count does not move with the machine's load, so two builds compare
// within a fraction of a percent on a shared machine; it does not see
// what an instruction costs (cache misses, system calls' time in the
// kernel), so read it beside the timed rows. GOMAXPROCS=1 for both (what
// other Ps do while idle, spinning for work, would count too).
func instructionsPerCall(ours string, oursEnv []string, minimal string, minEnv []string, fake *proxmoxtest.Server, small *proxmoxtest.Cluster, o options) error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return errors.New("the instructions section needs valgrind (callgrind)")
	}
	dir := o.callgrindOut
	if dir == "" {
		tmp, err := os.MkdirTemp("", "compare-callgrind-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	g := small.Guests[0]
	args := map[string]any{"node": g.Node, "type": g.Type, "vmid": g.VMID}
	sess, err := startSession(ours, oursEnv)
	if err != nil {
		return err
	}
	gets, err := upstreamGets(sess, fake, "guest_status", args)
	sess.close()
	if err != nil {
		return err
	}
	if len(gets) != 1 {
		return fmt.Errorf("guest_status made %d upstream GETs, want 1: %q", len(gets), gets)
	}
	const warm = 20
	n := max(o.calls, 1)
	servers := []struct {
		name, bin string
		env       []string
		tool      string
		args      map[string]any
		checks    bool // makes the background privilege check
	}{
		{"ours", ours, oursEnv, "guest_status", args, true},
		{"minimal", minimal, minEnv, "list_guests", map[string]any{"path": gets[0]}, false},
	}
	if o.versus != "" {
		servers = append(servers, servers[0])
		servers[2].name, servers[2].bin = "-versus", o.versus
	}
	perCall := make([]float64, len(servers))
	for i, s := range servers {
		var counts [2]int64
		for k, calls := range []int{0, n} {
			out := filepath.Join(dir, fmt.Sprintf("%s-%d.out", s.name, calls))
			c := callgrindRun{bin: s.bin, env: s.env, out: out, tool: s.tool, args: s.args, warm: warm, calls: calls}
			if s.checks {
				c.fake = fake
			}
			if counts[k], err = c.run(); err != nil {
				return fmt.Errorf("%s under callgrind: %w", s.name, err)
			}
		}
		perCall[i] = float64(counts[1]-counts[0]) / float64(n)
		fmt.Printf("instructions, %s (%s): %d with %d warm-up calls, %d with %d more: %.0f per call\n", s.name, s.tool, counts[0], warm, counts[1], n, perCall[i])
	}
	if o.versus != "" {
		fmt.Printf("instructions per call: guest_status, ours / -versus build: %.0f / %.0f = %.3f×\n", perCall[0], perCall[2], perCall[0]/perCall[2])
	}
	fmt.Printf("instructions per call: guest_status, ours / minimal go-sdk server doing the same GET (%s): %.0f / %.0f = %.2f× (callgrind, GOMAXPROCS=1)\n", gets[0], perCall[0], perCall[1], perCall[0]/perCall[1])
	if o.callgrindOut != "" {
		fmt.Printf("callgrind's files in %s: the difference of a server's two runs per function is a call's profile (callgrind_annotate each)\n", dir)
	}
	return nil
}

// callgrindRun is one run of a server under callgrind: initialize,
// tools/list, a call of tool, a pause, the rest of warm calls, then calls
// more, and stdin closed. The pause lets what a server does once in the
// background after its first call end before the others (ours' privilege
// check makes a TLS connection, millions of instructions, and a call
// during it another: when fake is set, the pause lasts until the fake has
// answered the check), so that the two runs of a server differ by the
// calls alone.
type callgrindRun struct {
	bin         string
	env         []string
	out         string // callgrind's output file
	tool        string
	args        map[string]any
	warm, calls int
	fake        *proxmoxtest.Server
	started     time.Time
}

// run returns the instructions the whole process ran.
func (c callgrindRun) run() (int64, error) {
	c.started = time.Now()
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+c.out, c.bin)
	// asyncpreemptoff: callgrind's signal handling fails on the runtime's
	// preemption signals; cpu.rdtscp=off: valgrind does not know RDTSCP,
	// which the runtime's lock spinning reads time with.
	cmd.Env = append(slices.Clone(c.env), "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	r := &rpc{cmd: cmd, in: in, out: bufio.NewReaderSize(stdout, 1<<20)}
	params := map[string]any{"name": c.tool, "arguments": c.args}
	call := func(n int) error {
		for range n {
			if err := checkTool(r.call("tools/call", params)); err != nil {
				return err
			}
		}
		return nil
	}
	err = r.initialize()
	if err == nil {
		_, err = r.call("tools/list", map[string]any{})
	}
	if err == nil {
		err = call(1)
	}
	if err == nil {
		err = c.pause()
	}
	if err == nil {
		err = call(c.warm - 1)
	}
	if err == nil {
		err = call(c.calls)
	}
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case werr := <-done:
		err = errors.Join(err, werr)
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		return 0, errors.Join(err, errors.New("no exit within 2 minutes of stdin's close"))
	}
	if err != nil {
		e := stderr.String()
		return 0, fmt.Errorf("%w; stderr: %s…", err, e[:min(len(e), 1500)])
	}
	return callgrindTotal(c.out)
}

// pause waits for ours' privilege check to be answered (c.fake set), or a
// second.
func (c callgrindRun) pause() error {
	if c.fake == nil {
		time.Sleep(time.Second)
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, q := range c.fake.Requests() {
			if q.Path == "/access/permissions" && !q.End.IsZero() && q.Start.After(c.started) {
				time.Sleep(time.Second) // the answer read and logged
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the privilege check did not come within a minute")
}

// callgrindTotal reads the instruction count of a callgrind output file
// (its "summary:" or "totals:" line; the first event is Ir).
func callgrindTotal(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		for _, key := range []string{"summary:", "totals:"} {
			if v, ok := strings.CutPrefix(line, key); ok {
				if f := strings.Fields(v); len(f) > 0 {
					return strconv.ParseInt(f[0], 10, 64)
				}
			}
		}
	}
	return 0, fmt.Errorf("%s: no summary line", path)
}
