package proxmoxtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// guestStats are derived counters the model does not store: they only need
// to be plausible, stable and zero for a stopped guest.
type guestStats struct {
	netin, netout, diskread, diskwrite uint64
	pid                                int
}

func stats(g *Guest) guestStats {
	if g.Status != "running" {
		return guestStats{}
	}
	up := uint64(max(g.Uptime, 1))
	v := uint64(g.VMID)
	return guestStats{
		netin: up*3217 + v*101, netout: up*1409 + v*37,
		diskread: up*5113 + v*4096, diskwrite: up*2711 + v*8192,
		pid: 1000 + g.VMID*7%30000,
	}
}

// loadGuest is load_config: the guest must be of that type on that node,
// else "Configuration file ... does not exist" (PVE has no 404 here).
func loadGuest(rc *reqCtx, typ string) (*Guest, *apiError) {
	node, vmid := rc.params["node"], rc.vmid()
	g := rc.s.cluster.guest(vmid)
	if g == nil || g.Node != node || g.Type != typ {
		return nil, errf("Configuration file '%s' does not exist", confPath(node, typ, vmid))
	}
	return g, nil
}

// handleGuestList is GET /nodes/{node}/qemu|lxc: only guests with VM.Audit.
// LXC vmid is a string before pve-container 5.0.10, which we tie to PVE 8.
func handleGuestList(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		c := rc.s.cluster
		node := rc.params["node"]
		out := []map[string]any{}
		for _, g := range c.Guests {
			if g.Node != node || g.Type != typ || !hasPriv(rc.token, fmt.Sprintf("/vms/%d", g.VMID), "VM.Audit") {
				continue
			}
			e := guestCommon(c, g)
			if typ == "lxc" {
				e["type"] = "lxc"
				if !c.versionAtLeast(8, 0, 0) {
					e["vmid"] = strconv.Itoa(g.VMID)
				}
			} else if rc.flag("full") {
				e["qmpstatus"] = qmpStatus(g)
			}
			out = append(out, e)
		}
		slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(fmt.Sprint(a["vmid"]), fmt.Sprint(b["vmid"])) })
		return out, nil
	}
}

// guestCommon holds the fields vmstatus (qemu) / vmstatus (lxc) share
// between the list and status/current.
func guestCommon(c *Cluster, g *Guest) map[string]any {
	st := stats(g)
	e := map[string]any{
		"vmid": g.VMID, "name": g.Name, "status": g.Status,
		"cpus": g.CPUs, "cpu": g.CPU, "maxmem": g.MaxMem, "mem": g.Mem,
		"maxdisk": g.MaxDisk, "disk": g.Disk, "uptime": g.Uptime,
		"netin": st.netin, "netout": st.netout, "diskread": st.diskread, "diskwrite": st.diskwrite,
	}
	if g.Status == "running" {
		e["pid"] = st.pid
		if c.versionAtLeast(9, 0, 0) {
			e["pressurecpusome"] = 0.0
			e["pressureiosome"] = 0.0
			e["pressureiofull"] = 0.0
			e["pressurememorysome"] = 0.0
			e["pressurememoryfull"] = 0.0
			if g.Type == "qemu" {
				e["pressurecpufull"] = 0.0
			}
		}
	}
	if g.Type == "qemu" && c.versionAtLeast(9, 0, 0) {
		e["memhost"] = g.Mem
	}
	if g.Type == "lxc" {
		e["maxswap"] = g.MaxMem
		e["swap"] = 0
	}
	if g.Template {
		e["template"] = 1
	}
	if len(g.Tags) > 0 {
		e["tags"] = strings.Join(g.Tags, ";")
	}
	if g.Lock != "" {
		e["lock"] = g.Lock
	}
	return e
}

func qmpStatus(g *Guest) string {
	switch {
	case g.Status != "running":
		return "stopped"
	case g.Paused:
		return "paused"
	}
	return "running"
}

// handleStatusCurrent is GET .../status/current. For an HA-managed guest
// with a pending state change it counts the read and applies the change once
// HADelayPolls reads have shown the old state.
func handleStatusCurrent(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		rc.s.advanceHA(g)
		c := rc.s.cluster
		e := guestCommon(c, g)
		ha := map[string]any{"managed": 0}
		if g.HAManaged {
			ha = map[string]any{"managed": 1, "state": c.haCRMState(g)}
		}
		e["ha"] = ha
		if typ == "lxc" {
			e["type"] = "lxc"
			return e, nil
		}
		e["qmpstatus"] = qmpStatus(g)
		if g.AgentEnabled {
			e["agent"] = 1 // only present when the agent is enabled in the config
		}
		if g.Status == "running" {
			e["running-machine"] = "pc-i440fx-10.1+pve0"
			e["running-qemu"] = "10.1.2"
			e["shares"] = 1000
			e["balloon"] = g.MaxMem
			e["balloon_min"] = g.MaxMem
			e["freemem"] = g.MaxMem - min(g.Mem, g.MaxMem)
			e["ballooninfo"] = map[string]any{
				"actual": g.MaxMem, "max_mem": g.MaxMem, "free_mem": g.MaxMem - min(g.Mem, g.MaxMem),
				"total_mem": g.MaxMem, "major_page_faults": 1811, "minor_page_faults": 3803793,
				"mem_swapped_in": 0, "mem_swapped_out": 0, "last_update": 1700000000 + g.Uptime,
			}
			st := stats(g)
			e["blockstat"] = map[string]any{"scsi0": map[string]any{
				"rd_bytes": st.diskread, "wr_bytes": st.diskwrite, "rd_operations": st.diskread / 4096,
				"wr_operations": st.diskwrite / 4096, "account_failed": true, "account_invalid": true,
				"failed_rd_operations": 0, "failed_wr_operations": 0, "timed_stats": []any{},
			}}
			e["nics"] = map[string]any{fmt.Sprintf("tap%di0", g.VMID): map[string]any{"netin": st.netin, "netout": st.netout}}
			e["proxmox-support"] = map[string]any{
				"backup-fleecing": true, "backup-max-workers": true, "pbs-dirty-bitmap": true,
				"pbs-dirty-bitmap-migration": true, "pbs-dirty-bitmap-savevm": true,
				"pbs-library-version": "2.0.1 (UNKNOWN)", "pbs-masterkey": true, "query-bitmap-info": true,
			}
		}
		return e, nil
	}
}

// derivedConfig is a plausible config of g, derived from the model's
// fields (the digest, pending changes and g.Config are added by
// currentConfig and the handlers).
func derivedConfig(g *Guest, typ string) map[string]any {
	memMiB := g.MaxMem >> 20
	e := map[string]any{
		"cores": g.CPUs, "memory": strconv.FormatUint(memMiB, 10),
	}
	if g.Description != "" {
		e["description"] = g.Description
	}
	if len(g.Tags) > 0 {
		e["tags"] = strings.Join(g.Tags, ";")
	}
	if g.Lock != "" {
		e["lock"] = g.Lock
	}
	if g.Template {
		e["template"] = 1
	}
	if n := len(g.Snapshots); n > 0 {
		e["parent"] = g.Snapshots[n-1].Name
	}
	diskGiB := max(g.MaxDisk>>30, 1)
	if typ == "lxc" {
		e["hostname"] = g.Name
		e["arch"] = "amd64"
		e["ostype"] = "debian"
		e["swap"] = memMiB
		e["rootfs"] = fmt.Sprintf("local-lvm:vm-%d-disk-0,size=%dG", g.VMID, diskGiB)
		e["net0"] = fmt.Sprintf("name=eth0,bridge=vmbr0,hwaddr=BC:24:11:%02X:%02X:%02X,ip=dhcp,type=veth", g.VMID>>16&0xff, g.VMID>>8&0xff, g.VMID&0xff)
		e["unprivileged"] = 1
		return e
	}
	e["name"] = g.Name
	e["sockets"] = 1
	e["ostype"] = "l26"
	e["scsihw"] = "virtio-scsi-single"
	e["boot"] = "order=scsi0;net0"
	e["scsi0"] = fmt.Sprintf("local-lvm:vm-%d-disk-0,iothread=1,size=%dG", g.VMID, diskGiB)
	e["net0"] = fmt.Sprintf("virtio=BC:24:11:%02X:%02X:%02X,bridge=vmbr0,firewall=1", g.VMID>>16&0xff, g.VMID>>8&0xff, g.VMID&0xff)
	e["smbios1"] = fmt.Sprintf("uuid=00000000-0000-4000-8000-%012d", g.VMID)
	e["vmgenid"] = fmt.Sprintf("00000000-0000-4000-9000-%012d", g.VMID)
	e["meta"] = "creation-qemu=10.1.2,ctime=1700000000"
	if g.AgentEnabled {
		e["agent"] = "1"
	}
	return e
}
