// Command fleet times a read across a fleet against one cluster: N
// proxmoxtest fakes (the demo cluster each) behind one MCP server
// (mcpserver.NewFleet), each answering after -latency, and the read
// (-tool: list_guests, or another fleet read: health_report, storage_list,
// backup_coverage) with cluster "*" against the same call on one cluster,
// through an in-memory MCP session, the two taking turns each round. It
// prints the median and the ratio (the target: 10 clusters at 25 ms take at
// most 1.3× one):
//
//	go run ./bench/fleet -clusters 10 -latency 25ms -runs 31
//	go run ./bench/fleet -tool health_report
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func main() {
	n := flag.Int("clusters", 10, "clusters in the fleet")
	latency := flag.Duration("latency", 25*time.Millisecond, "each fake's latency per request")
	runs := flag.Int("runs", 31, "calls of each kind")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed calls to this file")
	tool := flag.String("tool", mcpserver.ToolListGuests, "the read to time: list_guests, health_report, storage_list or backup_coverage")
	flag.Parse()
	if *n < 2 {
		log.Fatal("fleet: -clusters must be at least 2")
	}
	ctx := context.Background()
	var clients []*proxmoxsafe.Client
	for i := range *n {
		fake := proxmoxtest.NewServer(nil)
		defer fake.Close()
		fake.Latency = *latency
		c, err := proxmoxsafe.New(proxmoxsafe.Config{
			URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
			Fingerprint: fake.Fingerprint(), ClusterName: fmt.Sprintf("c%d", i),
			Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}}, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			log.Fatal(err)
		}
		clients = append(clients, c)
	}
	server := mcpserver.NewFleet(clients, nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-fleet", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	var cpuOne, cpuAll time.Duration
	call := func(cluster any) time.Duration {
		c0 := processCPU()
		defer func() {
			if cluster == "*" {
				cpuAll += processCPU() - c0
			} else {
				cpuOne += processCPU() - c0
			}
		}()
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: *tool, Arguments: map[string]any{"cluster": cluster}})
		d := time.Since(start)
		if err != nil || res.IsError {
			log.Fatalf("%s on %v: %v %v", *tool, cluster, err, res)
		}
		return d
	}
	call("c0") // connections and schemas warm
	call("*")
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	var one, all []time.Duration
	for r := range *runs {
		if r%2 == 0 {
			one = append(one, call("c0"))
			all = append(all, call("*"))
		} else {
			all = append(all, call("*"))
			one = append(one, call("c0"))
		}
	}
	m1, mN := median(one), median(all)
	fmt.Fprintf(os.Stdout, "%s at %v latency, %d runs each (medians)\n", *tool, *latency, *runs)
	fmt.Fprintf(os.Stdout, "  1 cluster:   %v\n", m1.Round(10*time.Microsecond))
	fmt.Fprintf(os.Stdout, "  %d clusters: %v\n", *n, mN.Round(10*time.Microsecond))
	fmt.Fprintf(os.Stdout, "  ratio:       %.2f× (target ≤ 1.30×)\n", float64(mN)/float64(m1))
	fmt.Fprintf(os.Stdout, "  CPU per call (this process: server, client and the fakes): 1 cluster %v, %d clusters %v; load average %s\n",
		(cpuOne / time.Duration(*runs+1)).Round(10*time.Microsecond), *n, (cpuAll / time.Duration(*runs+1)).Round(10*time.Microsecond), loadAvg())
}

// processCPU is this process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
