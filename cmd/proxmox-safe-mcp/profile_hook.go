//go:build benchprofile

package main

// Profiling hook for bench/compare -profile, to see where a start spends
// its time: a binary built with
// -tags benchprofile writes a CPU profile of its whole run after package
// initialization to $PROXMOX_SAFE_BENCH_CPUPROFILE and a heap allocation
// profile to $PROXMOX_SAFE_BENCH_MEMPROFILE. The shipped binary never has
// this file.

import (
	"os"
	"runtime"
	"runtime/pprof"
)

func init() {
	if p := os.Getenv("PROXMOX_SAFE_BENCH_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			exitHooks = append(exitHooks, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if p := os.Getenv("PROXMOX_SAFE_BENCH_MEMPROFILE"); p != "" {
		runtime.MemProfileRate = 512
		exitHooks = append(exitHooks, func() {
			if f, err := os.Create(p); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		})
	}
}
