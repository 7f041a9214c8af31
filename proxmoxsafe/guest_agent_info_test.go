package proxmoxsafe_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestGuestAgentInfo(t *testing.T) {
	t.Parallel()
	c := addrCluster("9.1.1")
	c.Guests[0].Agent = &proxmoxtest.AgentFacts{
		HostName: "web1\u200b.example\x1b[2J",
		OS: map[string]string{"id": "mswindows", "name": "Microsoft Windows", "pretty-name": "Windows Server 2022 Standard",
			"version": "Microsoft Windows Server 2022", "version-id": "2022", "kernel-release": "20348", "machine": "x86_64"},
		FileSystems: []proxmoxtest.AgentFileSystem{
			{Name: "\\\\?\\Volume{1}\\", Mountpoint: "D:\\", Type: "NTFS", UsedBytes: 1 << 30, TotalBytes: 4 << 30},
			{Name: "\\\\?\\Volume{0}\\", Mountpoint: "C:\\", Type: "NTFS", UsedBytes: 30 << 30, TotalBytes: 40 << 30},
			{Name: "\\\\?\\Volume{2}\\", Mountpoint: "System Reserved", Type: "NTFS"},
		},
		ClockOffset: -90 * time.Second,
	}
	fake := proxmoxtest.NewUnstartedServer(c)
	fake.AgentTimeout = 30 * time.Millisecond
	fake.StartTLS()
	e := envFor(t, fake, false, nil)
	ctx := t.Context()
	res, err := e.client.GuestAgentInfo(ctx, proxmoxsafe.GuestAgentInfoInput{Node: "pve1", VMID: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unavailable != "" || res.OS == nil || res.OS.PrettyName != "Windows Server 2022 Standard" || res.OS.Kernel != "20348" {
		t.Errorf("os: %+v %+v", res, res.OS)
	}
	if res.HostName != "web1.example" {
		t.Errorf("host name %q, want it sanitized", res.HostName)
	}
	var mounts []string
	for _, f := range res.FileSystems {
		mounts = append(mounts, f.Mountpoint)
	}
	if !slices.Equal(mounts, []string{"C:\\", "D:\\", "System Reserved"}) || res.FileSystemsTotal != 3 ||
		res.FileSystems[0].UsedPercent != 75 || res.FileSystems[2].TotalBytes != 0 {
		t.Errorf("file systems: %+v", res.FileSystems)
	}
	if res.ClockOffsetSeconds == nil || *res.ClockOffsetSeconds > -89 || *res.ClockOffsetSeconds < -91 || !strings.HasSuffix(res.Time, "Z") {
		t.Errorf("time %q, offset %v, want 90 s behind", res.Time, res.ClockOffsetSeconds)
	}
	if len(res.Failed) != 0 {
		t.Errorf("failed: %v", res.Failed)
	}
	if got := reqLines(e.requests()); len(got) != 4 || got[0] != "GET /nodes/pve1/qemu/100/agent/get-osinfo" {
		t.Errorf("requests %v, want get-osinfo then the other three", got)
	}
}

// TestGuestAgentInfoUnavailable: a stopped VM, one without agent and a
// hung agent are reported with the reason after the one request; a
// missing get-osinfo only fails that command.
func TestGuestAgentInfoUnavailable(t *testing.T) {
	t.Parallel()
	c := addrCluster("9.1.1")
	c.Guests = append(c.Guests, &proxmoxtest.Guest{VMID: 105, Node: "pve1", Type: "qemu", Name: "oldwin", Status: "running", AgentEnabled: true,
		Agent: &proxmoxtest.AgentFacts{HostName: "OLDWIN"}})
	fake := proxmoxtest.NewUnstartedServer(c)
	fake.AgentTimeout = 30 * time.Millisecond
	fake.StartTLS()
	e := envFor(t, fake, false, nil)
	ctx := t.Context()
	for _, tt := range []struct {
		node   string
		vmid   int
		reason string
	}{
		{"pve1", 103, proxmoxsafe.UnavailableStopped},
		{"pve1", 101, proxmoxsafe.UnavailableAgentNotConfigured},
		{"pve2", 102, proxmoxsafe.UnavailableAgentNotRunning},
		{"pve1", 200, proxmoxsafe.UnavailableError}, // a container: no such VM config
	} {
		e.fake.ResetRequests()
		res, err := e.client.GuestAgentInfo(ctx, proxmoxsafe.GuestAgentInfoInput{Node: tt.node, VMID: tt.vmid})
		if err != nil {
			t.Fatalf("%d: %v", tt.vmid, err)
		}
		if res.Unavailable != tt.reason || res.Detail == "" || res.OS != nil || len(e.requests()) != 1 {
			t.Errorf("%d: %+v after %v, want %s after one request", tt.vmid, res, reqLines(e.requests()), tt.reason)
		}
	}
	res, err := e.client.GuestAgentInfo(ctx, proxmoxsafe.GuestAgentInfoInput{Node: "pve1", VMID: 105})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unavailable != "" || res.OS != nil || res.HostName != "OLDWIN" || len(res.Failed) != 1 || !strings.HasPrefix(res.Failed[0], "get-osinfo: VM 105 qga command 'guest-get-osinfo' failed") {
		t.Errorf("old agent: %+v", res)
	}

	e.fake.ResetRequests()
	for _, in := range []proxmoxsafe.GuestAgentInfoInput{{Node: "pve1", VMID: 1}, {Node: "", VMID: 100}, {Node: "pve3", VMID: 300}} {
		_, err := e.client.GuestAgentInfo(ctx, in)
		if !errors.Is(err, proxmoxsafe.ErrInvalidInput) && !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
			t.Errorf("%+v: %v, want a refusal", in, err)
		}
	}
	if got := e.requests(); len(got) != 0 {
		t.Errorf("refusals sent %v", reqLines(got))
	}
}

// TestGuestAgentInfoNoPermission: without VM.GuestAgent.Audit (PVE 9) the
// VM is reported as no_permission, not as a failed call.
func TestGuestAgentInfoNoPermission(t *testing.T) {
	t.Parallel()
	c := addrCluster("9.1.1")
	c.Tokens = map[string]*proxmoxtest.Token{"automation@pve!mcp": {Secret: canary, Privileges: map[string][]string{"/": {"VM.Audit", "Sys.Audit"}}}}
	e := envFor(t, proxmoxtest.NewServer(c), false, nil)
	res, err := e.client.GuestAgentInfo(t.Context(), proxmoxsafe.GuestAgentInfoInput{Node: "pve1", VMID: 100})
	if err != nil || res.Unavailable != proxmoxsafe.UnavailableNoPermission || !strings.Contains(res.Detail, "VM.GuestAgent.Audit") {
		t.Errorf("%+v, %v", res, err)
	}
	addrs, err := e.client.GuestAddresses(t.Context(), proxmoxsafe.GuestAddressesInput{VMID: 100})
	if err != nil || addrs.Guests[0].Unavailable != proxmoxsafe.UnavailableNoPermission {
		t.Errorf("addresses: %+v, %v", addrs, err)
	}
}

// TestGuestAgentInfoBounds: however many file systems an agent reports
// and however long their names, the answer keeps 32, by mount point, with
// capped strings, and counts them all.
func TestGuestAgentInfoBounds(t *testing.T) {
	t.Parallel()
	c := addrCluster("9.1.1")
	facts := &proxmoxtest.AgentFacts{HostName: strings.Repeat("h", 1000), OS: map[string]string{"pretty-name": strings.Repeat("p", 1000)}}
	for i := range 500 {
		facts.FileSystems = append(facts.FileSystems, proxmoxtest.AgentFileSystem{
			Name: strings.Repeat("n", 500), Mountpoint: fmt.Sprintf("/srv/%03d/%s", 499-i, strings.Repeat("m", 600)), Type: strings.Repeat("t", 100),
			UsedBytes: 1, TotalBytes: 3})
	}
	c.Guests[0].Agent = facts
	e := envFor(t, proxmoxtest.NewServer(c), false, nil)
	res, err := e.client.GuestAgentInfo(t.Context(), proxmoxsafe.GuestAgentInfoInput{Node: "pve1", VMID: 100})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if len(res.FileSystems) != proxmoxsafe.MaxAgentFileSystems || res.FileSystemsTotal != 500 || !strings.HasPrefix(res.FileSystems[0].Mountpoint, "/srv/000/") ||
		len(res.FileSystems[0].Mountpoint) > 256 || len(res.HostName) > 255 || len(res.OS.PrettyName) > 128 || res.FileSystems[0].UsedPercent != 33.3 {
		t.Errorf("%d of %d file systems, first %q (%d B), host name %d B", len(res.FileSystems), res.FileSystemsTotal, res.FileSystems[0].Mountpoint[:12], len(res.FileSystems[0].Mountpoint), len(res.HostName))
	}
	if len(b) > 24<<10 {
		t.Errorf("answer %d B, want at most 24 KiB", len(b))
	}
	t.Logf("largest agent answer: %d B of JSON", len(b))
}
