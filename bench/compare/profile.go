package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// profile writes CPU and allocation profiles of ours (built with the
// benchprofile tag, so its main writes them on exit) to o.profile: a CPU
// profile of each of o.runs cold starts (initialize, tools/list, stdin
// close), then allocation profiles of as many more (separate runs: sampling
// every allocation would distort the CPU profile), and the same two for a
// session of o.calls calls of each of profiledCalls after its cold start,
// and o.calls/10 of list_guests over the 10,000-guest cluster. Merge and read
// them with, e.g.,
//
//	go tool pprof -top DIR/cold-*-cpu.pprof
//	go tool pprof -sample_index=alloc_space -top DIR/cold-*-mem.pprof
func profile(ours string, env []string, envFor func(*proxmoxtest.Server, string) []string, o options) error {
	dir, err := filepath.Abs(o.profile)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	profileVar := func(name, kind string) string {
		v := "PROXMOX_SAFE_BENCH_CPUPROFILE="
		if kind == "mem" {
			v = "PROXMOX_SAFE_BENCH_MEMPROFILE="
		}
		return v + filepath.Join(dir, name+"-"+kind+".pprof")
	}
	with := func(name, kind string) []string { return append(slices.Clone(env), profileVar(name, kind)) }
	for _, kind := range []string{"cpu", "mem"} {
		for i := range o.runs {
			if _, _, _, err := coldStart(ours, with(fmt.Sprintf("cold-%02d", i), kind), false); err != nil {
				return fmt.Errorf("cold start %d: %w", i, err)
			}
		}
		for _, tc := range profiledCalls() {
			sess, err := startSession(ours, with("calls-"+tc.tool, kind))
			if err != nil {
				return err
			}
			params := map[string]any{"name": tc.tool, "arguments": tc.args}
			for range o.calls {
				if err := checkTool(sess.call("tools/call", params)); err != nil {
					sess.close()
					return err
				}
			}
			sess.close()
		}
		// list_guests over 10,000 guests (o.calls/10 calls, as compared).
		big := proxmoxtest.NewServer(bigCluster())
		sess, err := startSession(ours, append(envFor(big, "pve1"), profileVar("calls-list_guests-10k", kind)))
		if err != nil {
			big.Close()
			return err
		}
		params := map[string]any{"name": "list_guests", "arguments": map[string]any{}}
		for range max(o.calls/10, 5) {
			if err = checkTool(sess.call("tools/call", params)); err != nil {
				break
			}
		}
		sess.close()
		big.Close()
		if err != nil {
			return err
		}
	}
	fmt.Printf("profiles of %d cold starts and %d calls of each tool (%d of list_guests over 10,000 guests) in %s\n", o.runs, o.calls, max(o.calls/10, 5), dir)
	return nil
}

// profiledCalls are the calls profiled, one session each.
func profiledCalls() []struct {
	tool string
	args map[string]any
} {
	g := smallCluster().Guests[0]
	return []struct {
		tool string
		args map[string]any
	}{
		{"list_guests", map[string]any{}},
		{"guest_status", map[string]any{"node": g.Node, "type": g.Type, "vmid": g.VMID}},
	}
}
