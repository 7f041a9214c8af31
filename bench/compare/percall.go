package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/benchutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// measure is one thing the per-call section times: a tool call on one of
// the servers, or a replay of upstream GETs from this process.
type measure struct {
	name string
	call func() error
	pid  int // the server process whose CPU time the call costs; 0: none
}

// roundSamples are one measure's figures, one per round: the median wall
// time of the round's calls and the server's CPU time per call over them.
type roundSamples struct {
	wall, cpu []time.Duration
}

// interleaved runs rounds rounds; in each, for each group, every measure
// of the group makes n calls, in an order rotated each round
// (benchutil.RoundOrder). Timing ours for all its calls, then minimal for
// all of its, let the ratio follow the machine's load (0.77× on a quiet
// machine, 0.88–1.58× within ten minutes on the same binaries); taking
// turns every n calls puts both under the same load, and a ratio taken
// per round and then its median discards the rounds a burst of load hit
// one side of.
func interleaved(groups [][]measure, rounds, n int) (map[string]*roundSamples, error) {
	warm := max(n/10, 3)
	for _, g := range groups {
		for _, m := range g {
			for range warm {
				if err := m.call(); err != nil {
					return nil, fmt.Errorf("%s: %w", m.name, err)
				}
			}
		}
	}
	out := map[string]*roundSamples{}
	times := make([]time.Duration, n)
	for r := range rounds {
		for _, g := range groups {
			for _, i := range benchutil.RoundOrder(r, len(g)) {
				m := g[i]
				var cpu0 time.Duration
				cpuOK := false
				if m.pid > 0 {
					cpu0, cpuOK = benchutil.ProcCPU(m.pid)
				}
				for k := range n {
					t0 := time.Now()
					if err := m.call(); err != nil {
						return nil, fmt.Errorf("%s: %w", m.name, err)
					}
					times[k] = time.Since(t0)
				}
				var cpu time.Duration
				if cpuOK {
					if cpu1, ok := benchutil.ProcCPU(m.pid); ok {
						cpu = (cpu1 - cpu0) / time.Duration(n)
					}
				}
				s := out[m.name]
				if s == nil {
					s = &roundSamples{}
					out[m.name] = s
				}
				s.wall = append(s.wall, median(times))
				s.cpu = append(s.cpu, cpu)
			}
		}
	}
	return out, nil
}

// pairedRatio is the median over rounds of a[i]/b[i], and the lowest and
// highest of them; zero when b has a zero (no CPU figure).
func pairedRatio(a, b []time.Duration) (med, lo, hi float64) {
	if len(a) == 0 || len(a) != len(b) {
		return 0, 0, 0
	}
	rs := make([]float64, len(a))
	for i := range a {
		if b[i] <= 0 {
			return 0, 0, 0
		}
		rs[i] = float64(a[i]) / float64(b[i])
	}
	return benchutil.Median(rs), slices.Min(rs), slices.Max(rs)
}

// perCallRows measures the per-call cost of ours' small reads against the
// very upstream GETs each made (replayed as bare keep-alive GETs decoded
// into any) and against the minimal go-sdk server making the same GET,
// all interleaved (interleaved). Both servers run for the whole section,
// one session each.
func perCallRows(ours string, oursEnv []string, minimal string, minEnv []string, fake *proxmoxtest.Server, small *proxmoxtest.Cluster, o options) ([]row, error) {
	sess, err := startSession(ours, oursEnv)
	if err != nil {
		return nil, err
	}
	defer sess.close()
	msess, err := startSession(minimal, minEnv)
	if err != nil {
		return nil, err
	}
	defer msess.close()
	// -versus: another build of ours, taking its turns beside the others,
	// so that a change is measured under the same load as what it changes.
	var vsess *rpc
	if o.versus != "" {
		if vsess, err = startSession(o.versus, oursEnv); err != nil {
			return nil, err
		}
		defer vsess.close()
	}

	tool := func(r *rpc, name string, args map[string]any) func() error {
		params := map[string]any{"name": name, "arguments": args}
		return func() error { return checkTool(r.call("tools/call", params)) }
	}
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	// replay sends gets one after another, or all at once (each its own
	// goroutine, as the library sends independent reads), over a client of
	// its own with as many idle connections as it sends at once.
	replay := func(gets []string, atOnce bool) func() error {
		hc, getter := bareGetter(fake, len(gets))
		closers = append(closers, hc.CloseIdleConnections)
		get := func(p string) error {
			return getter(p, func(r io.Reader) error { var v any; return json.NewDecoder(r).Decode(&v) })
		}
		return func() error {
			if !atOnce {
				for _, p := range gets {
					if err := get(p); err != nil {
						return err
					}
				}
				return nil
			}
			errs := make([]error, len(gets))
			var wg sync.WaitGroup
			for i, p := range gets {
				wg.Go(func() { errs[i] = get(p) })
			}
			wg.Wait()
			return errors.Join(errs...)
		}
	}

	g := small.Guests[0]
	type toolCase struct {
		tool    string
		args    map[string]any
		primary string // the one GET the tool wraps; the others are secondary reads
		minimal bool   // also the minimal server making the same (primary) GET
	}
	cases := []toolCase{
		{"list_guests", map[string]any{}, "", true},
		{"guest_status", map[string]any{"node": g.Node, "type": g.Type, "vmid": g.VMID}, "", true},
		{"cluster_status", map[string]any{}, "/cluster/status", false},
	}
	var groups [][]measure
	var rows []func(map[string]*roundSamples) []row
	for _, tc := range cases {
		gets, err := upstreamGets(sess, fake, tc.tool, tc.args)
		if err != nil {
			return nil, err
		}
		if len(gets) == 0 {
			return nil, fmt.Errorf("%s made no upstream request to compare with", tc.tool)
		}
		one := gets[:1]
		if i := slices.Index(gets, tc.primary); i >= 0 {
			one = gets[i : i+1]
		}
		name := func(what string) string { return tc.tool + ": " + what }
		group := []measure{
			{name("ours"), tool(sess, tc.tool, tc.args), sess.cmd.Process.Pid},
			{name("the same GETs"), replay(gets, false), 0},
		}
		if vsess != nil {
			group = append(group, measure{name("-versus"), tool(vsess, tc.tool, tc.args), vsess.cmd.Process.Pid})
		}
		if len(gets) > 1 {
			group = append(group,
				measure{name("the same GETs at once"), replay(gets, true), 0},
				measure{name("one GET"), replay(one, false), 0})
		}
		if tc.minimal {
			// The minimal server's one tool GETs /cluster/resources?type=vm
			// by default, else its path argument: the primary GET here, so
			// ours / minimal shows what this server adds beyond what any
			// go-sdk stdio server costs for the same read.
			margs := map[string]any{}
			if !strings.HasPrefix(one[0], "/cluster/resources") {
				margs["path"] = one[0]
			}
			group = append(group, measure{name("minimal"), tool(msess, "list_guests", margs), msess.cmd.Process.Pid})
			if len(gets) > 1 {
				group = append(group, measure{name("minimal's GET"), replay(one, false), 0})
			}
		}
		groups = append(groups, group)
		rows = append(rows, func(s map[string]*roundSamples) []row {
			rs := []row{pairRow(s, fmt.Sprintf("per call: %s (%d upstream GET) / the same GETs", tc.tool, len(gets)), name("ours"), name("the same GETs"), 1.5, false)}
			if len(gets) > 1 {
				rs = append(rs,
					pairRow(s, fmt.Sprintf("per call: %s / the same %d GETs at once", tc.tool, len(gets)), name("ours"), name("the same GETs at once"), 0, false),
					pairRow(s, fmt.Sprintf("per call: %s / one GET (%s)", tc.tool, one[0]), name("ours"), name("one GET"), 0, false))
			}
			if vsess != nil {
				rs = append(rs,
					pairRow(s, fmt.Sprintf("per call: %s, ours / -versus build", tc.tool), name("ours"), name("-versus"), 0, false),
					pairRow(s, fmt.Sprintf("server CPU per call: %s, ours / -versus build", tc.tool), name("ours"), name("-versus"), 0, true))
			}
			if !tc.minimal {
				return rs
			}
			minGET := name("the same GETs")
			if len(gets) > 1 {
				minGET = name("minimal's GET")
			}
			target := 0.0
			if tc.tool == "guest_status" {
				target = 1.0 // the small read's target
			}
			return append(rs,
				pairRow(s, fmt.Sprintf("per call: %s's GET, minimal go-sdk server (reference) / the same GET", tc.tool), name("minimal"), minGET, 0, false),
				pairRow(s, fmt.Sprintf("per call: %s, ours / minimal go-sdk server doing the same GET", tc.tool), name("ours"), name("minimal"), target, false),
				pairRow(s, fmt.Sprintf("server CPU per call: %s, ours / minimal doing the same GET", tc.tool), name("ours"), name("minimal"), 0, true))
		})
	}
	samples, err := interleaved(groups, max(o.callRounds, 1), max(o.calls, 1))
	if err != nil {
		return nil, err
	}
	var out []row
	for _, f := range rows {
		out = append(out, f(samples)...)
	}
	return out, nil
}

// pairRow compares measure a with b: the medians over rounds of their
// per-round wall times (or server CPU per call), and the median of the
// per-round ratios with their range.
func pairRow(s map[string]*roundSamples, what, a, b string, target float64, cpu bool) row {
	sa, sb := s[a].wall, s[b].wall
	if cpu {
		sa, sb = s[a].cpu, s[b].cpu
	}
	r := row{what: what, ours: median(sa), base: median(sb), target: target}
	r.ratio, r.lo, r.hi = pairedRatio(sa, sb)
	return r
}
