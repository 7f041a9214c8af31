package proxmoxtest

import (
	"strings"
	"time"
)

// demoInsight gives the demo's guests what guest_addresses and
// guest_agent_info show: web-01 an agent with a second interface and a
// fuller disk, web-02 a second address family, monitoring an agent that
// does not answer (3 s, as Proxmox waits), and the containers addresses
// of the demo's LAN. db-01 has no agent configured and backup-agent is a
// stopped container, so both inline reasons show too.
func demoInsight(web1, web2, mon *Guest, c *Cluster) {
	web1.Interfaces = []NetInterface{
		{Name: "lo", MAC: "00:00:00:00:00:00", Addrs: []string{"127.0.0.1/8", "::1/128"}},
		{Name: "ens18", MAC: "bc:24:11:00:00:64", Addrs: []string{"192.168.10.21/24", "2001:db8:10::21/64", "fe80::be24:11ff:fe00:64/64"}},
		{Name: "docker0", MAC: "02:42:5f:1c:3a:01", Addrs: []string{"172.17.0.1/16"}},
	}
	web1.Agent = &AgentFacts{
		HostName: "web-01",
		OS: map[string]string{"id": "debian", "name": "Debian GNU/Linux", "pretty-name": "Debian GNU/Linux 13 (trixie)",
			"version": "13 (trixie)", "version-id": "13", "machine": "x86_64",
			"kernel-release": "6.12.48+deb13-amd64", "kernel-version": "#1 SMP PREEMPT_DYNAMIC Debian 6.12.48-1 (2025-09-20)"},
		FileSystems: []AgentFileSystem{
			{Name: "sda1", Mountpoint: "/", Type: "ext4", TotalBytes: 62 * gib, UsedBytes: 51 * gib, Dev: "/dev/sda1"},
			{Name: "sda15", Mountpoint: "/boot/efi", Type: "vfat", TotalBytes: 124 << 20, UsedBytes: 12 << 20, Dev: "/dev/sda15"},
		},
		ClockOffset: 1200 * time.Millisecond,
	}
	web2.Interfaces = []NetInterface{
		{Name: "lo", MAC: "00:00:00:00:00:00", Addrs: []string{"127.0.0.1/8", "::1/128"}},
		{Name: "ens18", MAC: "bc:24:11:00:00:65", Addrs: []string{"192.168.10.22/24", "2001:db8:10::22/64", "fe80::be24:11ff:fe00:65/64"}},
	}
	mon.AgentEnabled, mon.AgentHung = true, true
	lan := map[int]string{200: "192.168.10.53/24", 201: "192.168.10.80/24", 204: "192.168.10.25/24"}
	for _, g := range c.Guests {
		if addr, ok := lan[g.VMID]; ok {
			mac := macFor(g.VMID)
			g.Interfaces = []NetInterface{
				{Name: "lo", MAC: "00:00:00:00:00:00", Addrs: []string{"127.0.0.1/8", "::1/128"}},
				{Name: "eth0", MAC: strings.ToLower(mac), Addrs: []string{addr}},
			}
		}
	}
}
