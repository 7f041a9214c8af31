package proxmoxtest

import (
	"strconv"
	"time"
)

// demoHealth gives [DemoCluster]'s nodes a health to report: pve1 with
// pending updates and a disk without a wear indicator ("N/A"), pve2 with
// a failing disk, a worn-out SSD, a degraded ZFS pool and a failed
// service, pve3 healthy; and two replication jobs, one of them failing.
// Only the node health and replication endpoints read it.
func demoHealth(c *Cluster) {
	pve1 := DefaultNodeHealth()
	pve1.Updates = []PackageUpdate{
		{Package: "pve-manager", Title: "Proxmox Virtual Environment Management Tools", Origin: "Proxmox", Section: "admin", Priority: "important", OldVersion: "9.1.1", Version: "9.1.2"},
		{Package: "proxmox-kernel-6.17.4-1-pve-signed", Title: "Proxmox Kernel Image (signed)", Origin: "Proxmox", Section: "kernel", Version: "6.17.4-1"},
		{Package: "libssl3t64", Title: "Secure Sockets Layer toolkit - shared libraries", Origin: "Debian", Section: "libs", OldVersion: "3.5.1-1", Version: "3.5.1-1+deb13u1"},
		{Package: "openssh-server", Title: "secure shell (SSH) server", Origin: "Debian", Section: "net", OldVersion: "1:10.0p1-7", Version: "1:10.0p1-7+deb13u1"},
	}
	pve1.Disks = append(pve1.Disks, NodeDisk{DevPath: "/dev/sda", Model: "HGST HUS726T4TALA6L4", Serial: "V6G0000A", Type: "hdd",
		Size: 4_000_787_030_016, Health: "PASSED", Wearout: "N/A", Used: "ZFS", RPM: 7200, WWN: "0x5000cca000000001"})
	pve1.ZFSPools = []ZFSPool{{Name: "rpool", Health: "ONLINE", Size: 3_985_729_650_688, Alloc: 1_099_511_627_776, Free: 2_886_218_022_912, Frag: 3,
		Scan: "scrub repaired 0B in 02:11:09 with 0 errors on Sun Nov  8 02:35:10 2026"}}

	pve2 := DefaultNodeHealth()
	pve2.Disks[0].Wearout = "4" // 96 % of its rated writes used
	pve2.Disks = append(pve2.Disks, NodeDisk{DevPath: "/dev/sdb", Model: "ST4000NM000A-2HZ100", Serial: "WJG0000B", Type: "hdd",
		Size: 4_000_787_030_016, Health: "FAILED!", Wearout: "N/A", Used: "ZFS", RPM: 7200, WWN: "0x5000c500000000b"})
	pve2.ZFSPools = []ZFSPool{{Name: "tank", Health: "DEGRADED", Size: 3_985_729_650_688, Alloc: 2_199_023_255_552, Free: 1_786_706_395_136, Frag: 11,
		Errors: "No known data errors",
		Status: "One or more devices are faulted in response to persistent errors. Sufficient replicas exist for the pool to continue functioning in a degraded state.",
		Action: "Replace the faulted device, or use 'zpool clear' to mark the device repaired.",
		Scan:   "resilvered 1.21T in 03:02:11 with 0 errors on Mon Nov 30 04:12:51 2026"}}
	for i, s := range pve2.Services {
		if s.Name == "postfix" {
			pve2.Services[i].ActiveState, pve2.Services[i].State = "failed", "failed"
		}
	}
	c.Nodes[0].Health, c.Nodes[1].Health = pve1, pve2

	// Times relative to now, so the demo's replication looks current.
	now := time.Now().Truncate(15 * time.Minute).Unix()
	c.Replication = []*ReplicationJob{
		{Guest: 100, JobNum: 0, Target: "pve2", LastSync: now, LastTry: now, Duration: 2.4},
		{Guest: 102, JobNum: 0, Target: "pve3", Schedule: "*/30", LastSync: now - 3*3600, LastTry: now - 900, FailCount: 3, Duration: 0.9,
			Error: "command 'zfs snapshot rpool/data/vm-102-disk-0@__replicate_102-0_" + strconv.FormatInt(now-900, 10) + "__' failed: exit code 1"},
	}
}

// SeedHealthFindings adds to a [DemoCluster] what the health report
// flags that the demo's own state does not already show: an offline
// fourth node (pve4), a Ceph in HEALTH_WARN, an HA-managed VM the HA
// manager holds in error (legacy-erp, 108, which also has no backup) and a
// shared storage 95 % full. With [DemoCluster]'s own data (pending
// updates, a failing and a worn-out disk, a degraded ZFS pool, a failed
// service, failing replication, old backups and snapshots, running VMs
// without the guest agent) the report then has one finding of each kind.
// The binary's demo uses it; most tests use the plain [DemoCluster].
func SeedHealthFindings(c *Cluster) {
	pve4 := demoNode(4)
	pve4.Online = false
	c.Nodes = append(c.Nodes, pve4)
	c.Ceph = DemoCeph("pve1", "pve2", "pve3")
	erp := demoGuest(108, "pve3", "qemu", "legacy-erp", "stopped", 4, 16, 200, "erp")
	erp.HAManaged, erp.HAState, erp.HACRMState, erp.AgentEnabled = true, "started", "error", true
	c.Guests = append(c.Guests, erp)
	c.Storages = append(c.Storages, &Storage{ID: "nas-archive", Type: "nfs", Content: []string{"iso"}, Shared: true,
		Total: 2 << 40, Used: 2<<40 - 100<<30, Config: map[string]string{"server": "192.0.2.50", "export": "/srv/archive", "path": "/mnt/pve/nas-archive"}})
}
