package proxmoxtest

import (
	"fmt"
	"strings"
	"time"
)

// NetInterface is one network interface inside a guest, as its guest
// agent or the container's network namespace reports it.
type NetInterface struct {
	// Name is the guest's name for it ("ens18", "eth0", "lo", "Ethernet").
	Name string
	// MAC is the hardware address as the guest writes it (qemu-ga and
	// `ip` write lower case).
	MAC string
	// Addrs are the addresses with their prefix length, in the guest's
	// order: "192.0.2.10/24", "fe80::1/64". The fake answers them as they
	// are, so a test can hand it what a hostile guest would report.
	Addrs []string
}

// AgentFacts is what a VM's guest agent reports about the guest besides
// its interfaces.
type AgentFacts struct {
	// HostName is get-host-name's "host-name".
	HostName string
	// OS is get-osinfo's result (members "id", "name", "pretty-name",
	// "version", "version-id", "kernel-release", "kernel-version",
	// "machine", …) answered as is; nil answers that qemu-ga does not
	// know the command, as an old Windows agent does.
	OS map[string]string
	// FileSystems are get-fsinfo's entries.
	FileSystems []AgentFileSystem
	// ClockOffset is how far the guest's clock (get-time) is ahead of the
	// server's; negative when behind.
	ClockOffset time.Duration
}

// AgentFileSystem is one get-fsinfo entry.
type AgentFileSystem struct {
	Name       string // "sda1", or a Windows volume GUID path
	Mountpoint string // "/", "C:\\"
	Type       string // "ext4", "NTFS"
	// UsedBytes and TotalBytes are absent from the answer when both are
	// zero (qemu-ga omits them for file systems it cannot stat).
	UsedBytes, TotalBytes uint64
	Dev                   string // the disk's device node, "/dev/sda1"
}

// agentCommandMissing is qemu-ga's error for a command it does not know,
// wrapped as qemu-server words it (QMPClient.pm).
func agentCommandMissing(g *Guest, cmd string) *apiError {
	return errf("VM %d qga command 'guest-%s' failed - The command guest-%s has not been found", g.VMID, cmd, cmd)
}

// guestInterfaces is the guest's Interfaces, or the derived loopback and
// one NIC: net0's MAC, an IPv4 address from the VMID and the EUI-64
// link-local address of that MAC, as a guest with DHCP on its one NIC has.
func guestInterfaces(g *Guest) []NetInterface {
	if g.Interfaces != nil {
		return g.Interfaces
	}
	mac := strings.ToLower(configMAC(g))
	name := "ens18"
	if g.Type == "lxc" {
		name = "eth0"
	}
	var b [6]byte
	fmt.Sscanf(mac, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5])
	linkLocal := fmt.Sprintf("fe80::%x:%xff:fe%02x:%x/64", uint16(b[0]^2)<<8|uint16(b[1]), b[2], b[3], uint16(b[4])<<8|uint16(b[5]))
	return []NetInterface{
		{Name: "lo", MAC: "00:00:00:00:00:00", Addrs: []string{"127.0.0.1/8", "::1/128"}},
		{Name: name, MAC: mac, Addrs: []string{
			fmt.Sprintf("10.%d.%d.%d/8", g.VMID>>16&0xff, g.VMID>>8&0xff, g.VMID&0xff), linkLocal}},
	}
}

// configMAC is the MAC of the guest's net0 (an extra Config key wins over
// the derived one), or the one Proxmox would have generated.
func configMAC(g *Guest) string {
	net0, _ := currentConfig(g)["net0"].(string)
	for _, part := range strings.Split(net0, ",") {
		k, v, ok := strings.Cut(part, "=")
		if ok && (k == "hwaddr" || k == "virtio" || k == "e1000" || k == "vmxnet3" || k == "rtl8139") && len(v) == 17 {
			return v
		}
	}
	return macFor(g.VMID)
}

// agentFacts is the guest's Agent or a derived Debian guest.
func agentFacts(g *Guest) *AgentFacts {
	if g.Agent != nil {
		return g.Agent
	}
	disk := max(g.MaxDisk, 8<<30)
	return &AgentFacts{
		HostName: g.Name,
		OS: map[string]string{
			"id": "debian", "name": "Debian GNU/Linux", "pretty-name": "Debian GNU/Linux 13 (trixie)",
			"version": "13 (trixie)", "version-id": "13", "machine": "x86_64",
			"kernel-release": "6.12.48+deb13-amd64", "kernel-version": "#1 SMP PREEMPT_DYNAMIC Debian 6.12.48-1 (2025-09-20)",
		},
		FileSystems: []AgentFileSystem{
			{Name: "sda1", Mountpoint: "/", Type: "ext4", TotalBytes: disk - 1<<30, UsedBytes: (disk - 1<<30) / 100 * 37, Dev: "/dev/sda1"},
			{Name: "sda15", Mountpoint: "/boot/efi", Type: "vfat", TotalBytes: 124 << 20, UsedBytes: 12 << 20, Dev: "/dev/sda15"},
		},
	}
}

// agentReady runs qemu-server's checks before any agent command
// (QemuServer/Agent.pm assert_agent_available): the permission of the
// cluster's version, the config (500 when the VM is not on that node), an
// agent configured, the VM running, and the agent answering its 3 s
// guest-ping. A hung agent (or a paused VM's) is a delayed answer.
func agentReady(rc *reqCtx) (*Guest, any, *apiError) {
	if aerr := agentPerm(rc.s.cluster).check(rc); aerr != nil {
		return nil, nil, aerr
	}
	g, aerr := loadGuest(rc, "qemu")
	if aerr != nil {
		return nil, nil, aerr
	}
	switch {
	case !g.AgentEnabled:
		return nil, nil, errf("No QEMU guest agent configured")
	case g.Status != "running":
		return nil, nil, errf("VM %d is not running", g.VMID)
	case g.AgentHung || g.Paused:
		// A paused VM's agent cannot answer either.
		wait := rc.s.AgentTimeout
		if wait <= 0 {
			wait = defaultAgentTimeout
		}
		return nil, delayedAnswer{wait: wait, err: errf("QEMU guest agent is not running")}, nil
	}
	return g, nil, nil
}

// agentRead is an agent GET (API2/Qemu/Agent.pm): after agentReady, the
// command's raw QGA return wrapped as {"result": …}.
func agentRead(answer func(rc *reqCtx, g *Guest) (any, *apiError)) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, delayed, aerr := agentReady(rc)
		if aerr != nil || delayed != nil {
			return delayed, aerr
		}
		res, aerr := answer(rc, g)
		if aerr != nil {
			return nil, aerr
		}
		return map[string]any{"result": res}, nil
	}
}

// agentNetworkInterfaces is guest-network-get-interfaces: name,
// hardware-address, ip-addresses (ip-address-type ipv4|ipv6, prefix) and,
// from newer qemu-ga builds, statistics (pve6 agent-network-get-interfaces.json).
func agentNetworkInterfaces(_ *reqCtx, g *Guest) (any, *apiError) {
	out := []map[string]any{}
	for _, nic := range guestInterfaces(g) {
		addrs := []map[string]any{}
		for _, a := range nic.Addrs {
			ip, prefix := splitCIDR(a)
			typ := "ipv4"
			if strings.Contains(ip, ":") {
				typ = "ipv6"
			}
			addrs = append(addrs, map[string]any{"ip-address": ip, "ip-address-type": typ, "prefix": prefix})
		}
		e := map[string]any{"name": nic.Name, "ip-addresses": addrs,
			"statistics": map[string]any{"rx-bytes": 1 << 20, "rx-packets": 1024, "rx-errs": 0, "rx-dropped": 0,
				"tx-bytes": 1 << 19, "tx-packets": 512, "tx-errs": 0, "tx-dropped": 0}}
		if nic.MAC != "" {
			e["hardware-address"] = nic.MAC
		}
		out = append(out, e)
	}
	return out, nil
}

// splitCIDR splits "addr/prefix"; an address without one gets -1, which
// no real answer has (the library must cope with anything).
func splitCIDR(s string) (string, any) {
	ip, p, ok := strings.Cut(s, "/")
	if !ok {
		return ip, -1
	}
	var n int
	if _, err := fmt.Sscanf(p, "%d", &n); err != nil {
		return ip, p
	}
	return ip, n
}

func agentOSInfo(_ *reqCtx, g *Guest) (any, *apiError) {
	f := agentFacts(g)
	if f.OS == nil {
		return nil, agentCommandMissing(g, "get-osinfo")
	}
	out := map[string]any{}
	for k, v := range f.OS {
		out[k] = v
	}
	return out, nil
}

func agentHostName(_ *reqCtx, g *Guest) (any, *apiError) {
	return map[string]any{"host-name": agentFacts(g).HostName}, nil
}

// agentFSInfo is guest-get-fsinfo: name, mountpoint, type, used-bytes and
// total-bytes (qemu-ga ≥ 3.0, absent where it cannot stat), disk (the
// devices under it, with their bus address).
func agentFSInfo(_ *reqCtx, g *Guest) (any, *apiError) {
	out := []map[string]any{}
	for i, fs := range agentFacts(g).FileSystems {
		e := map[string]any{"name": fs.Name, "mountpoint": fs.Mountpoint, "type": fs.Type,
			"disk": []map[string]any{{"bus-type": "scsi", "bus": 0, "target": 0, "unit": i, "dev": fs.Dev,
				"serial":         "0QEMU_QEMU_HARDDISK_drive-scsi0",
				"pci-controller": map[string]any{"domain": 0, "bus": 9, "slot": 1, "function": 0}}}}
		if fs.UsedBytes != 0 || fs.TotalBytes != 0 {
			e["used-bytes"], e["total-bytes"] = fs.UsedBytes, fs.TotalBytes
		}
		out = append(out, e)
	}
	return out, nil
}

// agentTime is guest-get-time: the guest's clock in nanoseconds since the
// epoch, a bare integer.
func agentTime(_ *reqCtx, g *Guest) (any, *apiError) {
	return time.Now().Add(agentFacts(g).ClockOffset).UnixNano(), nil
}
