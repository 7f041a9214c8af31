package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// Round trips: the library against a fake that delays every request by
// -trip-latency (a Proxmox behind a VPN or in another site is at 20–80 ms).
// Sequential round trips are counted from the fake's request log
// (proxmoxtest.SequentialDepth), not timed; the wait rows are times.

// tripCluster is one guest per case: each case changes its own guest.
func tripCluster() *proxmoxtest.Cluster {
	c := proxmoxtest.GenerateCluster(1, 0, 1)
	c.Nodes[0].Name = "pve1"
	for i, g := range []*proxmoxtest.Guest{
		{VMID: 100, Type: "qemu", Status: "running", Uptime: 86400},
		{VMID: 101, Type: "qemu", Status: "running", Uptime: 86400},
		{VMID: 102, Type: "qemu", Status: "running", Uptime: 86400},
		{VMID: 103, Type: "qemu", Status: "running", Uptime: 86400},
		{VMID: 200, Type: "lxc", Status: "running", Uptime: 86400, Snapshots: []*proxmoxtest.Snapshot{{Name: "before", SnapTime: 1700000000}}},
	} {
		g.Node, g.Name, g.CPUs, g.MaxMem = "pve1", fmt.Sprintf("g%d", i), 1, 1<<30
		c.Guests = append(c.Guests, g)
	}
	return c
}

// tripClient is a library client of fake with the power, snapshot and
// snapshot-admin classes, approvals by phrase unless approver is set.
func tripClient(fake *proxmoxtest.Server, protectNames bool, approver proxmoxsafe.Approver) (*proxmoxsafe.Client, error) {
	cfg := proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(),
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Policy: proxmoxsafe.Policy{
			AllowedNodes: []string{"pve1"},
			Classes:      []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot, proxmoxsafe.ClassSnapshotAdmin},
		},
		Audit: auditlog.New(io.Discard, nil),
	}
	if protectNames {
		cfg.Policy.ProtectedNames = []string{"not-a-guest"}
	}
	if approver != nil {
		cfg.Approvers = []proxmoxsafe.Approver{approver}
		l := []proxmoxsafe.ApprovalLevel{proxmoxsafe.ApprovalLevel(approver.Name())}
		cfg.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: l, proxmoxsafe.ClassSnapshot: l}
	}
	return proxmoxsafe.New(cfg)
}

// instantApprover approves at once, but is not the phrase: the pipeline
// treats it as an approval that may have taken minutes and reads again.
type instantApprover struct{}

func (instantApprover) Name() string { return "bench" }
func (instantApprover) Approve(context.Context, proxmoxsafe.ApprovalRequest) error {
	return nil
}

// warmClient opens as many keep-alive connections as a step's reads use
// at once (a TLS handshake is no logged request, and costs a real
// network two round trips once per connection).
func warmClient(c *proxmoxsafe.Client) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.ClusterStatus(context.Background()) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

type tripCase struct {
	what         string
	protectNames bool
	approver     proxmoxsafe.Approver
	call         func(ctx context.Context, c *proxmoxsafe.Client) error
	target       int // sequential round trips at most; 0: reported only
	taskPolls    int // the fake's TaskPolls; 0: -1, a task stops at once
}

func powerCall(vmid int, a proxmoxsafe.PowerAction, phrase bool) func(context.Context, *proxmoxsafe.Client) error {
	return func(ctx context.Context, c *proxmoxsafe.Client) error {
		in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: vmid}, Action: a}
		if phrase {
			in.Approval = in.ApprovalPhrase()
		}
		_, err := c.GuestPower(ctx, in)
		return err
	}
}

func snapshotCall(name string, phrase bool) func(context.Context, *proxmoxsafe.Client) error {
	return func(ctx context.Context, c *proxmoxsafe.Client) error {
		in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}, Name: name}
		if phrase {
			in.Approval = in.ApprovalPhrase()
		}
		_, err := c.SnapshotGuest(ctx, in)
		return err
	}
}

// roundTrips prints the sequential round trips of each case.
func roundTrips(latency time.Duration) error {
	fmt.Printf("\n| sequential round trips to Proxmox, fake latency %s per request | requests | sequential | target | time (in round trips) |\n|---|---|---|---|---|\n", latency)
	rollback := func(ctx context.Context, c *proxmoxsafe.Client) error {
		in := proxmoxsafe.RollbackSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}, Name: "before"}
		in.Approval = in.ApprovalPhrase()
		_, err := c.RollbackSnapshot(ctx, in)
		return err
	}
	deleteSnap := func(ctx context.Context, c *proxmoxsafe.Client) error {
		in := proxmoxsafe.DeleteSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}, Name: "before"}
		in.Approval = proxmoxsafe.ApprovalPhrase("delsnapshot", in.Target())
		_, err := c.DeleteSnapshot(ctx, in)
		return err
	}
	for _, tc := range []tripCase{
		{what: "read: guest_status", call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			_, err := c.GuestStatus(ctx, proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
			return err
		}, target: 1},
		{what: "read: cluster_status", call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			_, err := c.ClusterStatus(ctx)
			return err
		}, target: 1},
		{what: "guest_power shutdown, approved (phrase)", call: powerCall(100, proxmoxsafe.ActionShutdown, true), target: 2},
		{what: "guest_power shutdown, approved, protection by name", protectNames: true, call: powerCall(101, proxmoxsafe.ActionShutdown, true), target: 2},
		{what: "guest_power, refused: no phrase", call: powerCall(102, proxmoxsafe.ActionShutdown, false), target: 1},
		{what: "guest_power, refused: no phrase, protection by name", protectNames: true, call: powerCall(102, proxmoxsafe.ActionShutdown, false), target: 1},
		{what: "guest_power, approved by a slower approver (re-read)", approver: instantApprover{}, call: powerCall(103, proxmoxsafe.ActionStop, false), target: 3},
		{what: "snapshot_guest, approved", call: snapshotCall("s1", true), target: 2},
		{what: "snapshot_guest, approved, protection by name", protectNames: true, call: snapshotCall("s2", true), target: 2},
		{what: "snapshot_guest, refused: no phrase", call: snapshotCall("s3", false), target: 1},
		{what: "snapshot_guest, slower approver (re-read)", approver: instantApprover{}, call: snapshotCall("s4", false), target: 3},
		{what: "snapshot_guest, approved, wait (the fake's task answers one poll 'running')", taskPolls: 1, call: func(ctx context.Context, c *proxmoxsafe.Client) error {
			in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}, Name: "s5",
				Controls: proxmoxsafe.Controls{Wait: &proxmoxsafe.WaitOptions{}}}
			in.Approval = in.ApprovalPhrase()
			_, err := c.SnapshotGuest(ctx, in)
			return err
		}},
		{what: "snapshot_rollback, approved", call: rollback},
		{what: "snapshot_delete, approved", call: deleteSnap},
	} {
		fake := proxmoxtest.NewUnstartedServer(tripCluster())
		fake.Latency = latency
		fake.TaskPolls = -1
		if tc.taskPolls != 0 {
			fake.TaskPolls = tc.taskPolls
		}
		fake.StartTLS()
		c, err := tripClient(fake, tc.protectNames, tc.approver)
		if err == nil {
			err = warmClient(c)
		}
		if err != nil {
			fake.Close()
			return fmt.Errorf("%s: %w", tc.what, err)
		}
		fake.ResetRequests()
		t0 := time.Now()
		callErr := tc.call(context.Background(), c)
		took := time.Since(t0)
		reqs := fake.Requests()
		c.CloseIdleConnections()
		fake.Close()
		if callErr != nil && tc.target != 1 {
			return fmt.Errorf("%s: %w", tc.what, callErr)
		}
		depth := proxmoxtest.SequentialDepth(reqs)
		target := "—"
		if tc.target > 0 {
			target = fmt.Sprintf("≤ %d", tc.target)
		}
		fmt.Printf("| %s | %d | %d | %s | %s (%.1f) |\n", tc.what, len(reqs), depth, target, took.Round(time.Millisecond), float64(took)/float64(latency))
	}
	return nil
}

// waitOverhead measures how long after its task ended a waited-for
// snapshot answers: the fake ends each task durations[i] after it began
// (TaskDuration), and the overhead is the call's end minus the task's end
// (the snapshot request's start plus the duration).
func waitOverhead(latency time.Duration, durations []time.Duration) error {
	fmt.Printf("\n| snapshot_guest with wait, fake latency %s | whole call | answer after the task's end | polls (task + state) | poll pause when the task ended | target: the pause + the poll and the read |\n|---|---|---|---|---|---|\n", latency)
	for _, d := range durations {
		fake := proxmoxtest.NewUnstartedServer(tripCluster())
		fake.Latency = latency
		fake.TaskDuration = d
		fake.TaskPolls = 1 << 20 // only the duration ends a task
		fake.StartTLS()
		c, err := tripClient(fake, false, nil)
		if err == nil {
			err = warmClient(c)
		}
		if err != nil {
			fake.Close()
			return err
		}
		fake.ResetRequests()
		in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}, Name: "w1",
			Controls: proxmoxsafe.Controls{Wait: &proxmoxsafe.WaitOptions{Timeout: d + 30*time.Second}}}
		in.Approval = in.ApprovalPhrase()
		t0 := time.Now()
		r, err := c.SnapshotGuest(context.Background(), in)
		end := time.Now()
		var post time.Time
		reqs := fake.Requests()
		for _, q := range reqs {
			if q.Method == http.MethodPost {
				post = q.Start
			}
		}
		// The pause in effect when the task ended: from the status poll
		// before the first one sent after the end to that one.
		var pause time.Duration
		var prev time.Time
		for _, q := range reqs {
			if !strings.HasSuffix(q.Path, "/status") || !strings.Contains(q.Path, "/tasks/") {
				continue
			}
			if !q.Start.Before(post.Add(d)) {
				if !prev.IsZero() {
					pause = q.Start.Sub(prev)
				}
				break
			}
			prev = q.End
		}
		c.CloseIdleConnections()
		fake.Close()
		if err != nil {
			return fmt.Errorf("wait %s: %w", d, err)
		}
		after := end.Sub(post.Add(d))
		polls := ""
		if r.Outcome != nil {
			polls = fmt.Sprintf("%d + %d", r.Outcome.TaskPolls, r.Outcome.StatePolls)
		}
		verdict := "met"
		if after > pause+2*latency+latency/2 {
			verdict = "NOT met"
		}
		fmt.Printf("| task of %s | %s | %s (%.1f round trips) | %s | %s | ≤ %s + 2 round trips: %s |\n",
			d, end.Sub(t0).Round(time.Millisecond), after.Round(time.Millisecond), float64(after)/float64(latency), polls,
			pause.Round(time.Millisecond), pause.Round(time.Millisecond), verdict)
	}
	return nil
}
