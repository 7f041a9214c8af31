package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// profile writes CPU and allocation profiles of ours (built with the
// benchprofile tag, so its main writes them on exit) to o.profile: a CPU
// profile of each of o.runs cold starts (initialize, tools/list, stdin
// close), then allocation profiles of as many more (separate runs: sampling
// every allocation would distort the CPU profile), and the same two for a
// session of o.calls calls of each of profiledCalls after its cold start. Merge and read
// them with, e.g.,
//
//	go tool pprof -top DIR/cold-*-cpu.pprof
//	go tool pprof -sample_index=alloc_space -top DIR/cold-*-mem.pprof
func profile(ours string, env []string, o options) error {
	dir, err := filepath.Abs(o.profile)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	with := func(name, kind string) []string {
		v := "PROXMOX_SAFE_BENCH_CPUPROFILE="
		if kind == "mem" {
			v = "PROXMOX_SAFE_BENCH_MEMPROFILE="
		}
		return append(slices.Clone(env), v+filepath.Join(dir, name+"-"+kind+".pprof"))
	}
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
	}
	fmt.Printf("profiles of %d cold starts and %d calls of each tool in %s\n", o.runs, o.calls, dir)
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
