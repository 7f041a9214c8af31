package proxmoxtest

import (
	"encoding/json"
	"testing"
)

// configCluster has a qemu VM and a container carrying every kind of
// secret-bearing config key, and a VM whose current state is based on an
// older snapshot (after a rollback).
func configCluster() *Cluster {
	c := &Cluster{Name: "c", Nodes: []*Node{{Name: "pve1", Online: true}}}
	vm := &Guest{VMID: 100, Node: "pve1", Type: "qemu", Name: "vm", Status: "running", CPUs: 2, MaxMem: 2 << 30,
		Config: map[string]string{
			"cipassword": "hunter2", "ciuser": "admin",
			"sshkeys":    "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIabc%20me%40host%0A",
			"args":       "-fw_cfg name=opt/secret,string=s3cr3t",
			"hookscript": "local:snippets/hook.pl",
			"cores":      "4",
		},
		Snapshots: []*Snapshot{
			{Name: "a", SnapTime: 100},
			{Name: "b", Parent: "a", SnapTime: 200},
		},
		CurrentSnapshot: "a",
	}
	ct := &Guest{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct", Status: "stopped", CPUs: 1, MaxMem: 512 << 20,
		Config: map[string]string{"env": "TOKEN=abc\x00MODE=x", "entrypoint": "/app --key=k"},
		LXCRaw: [][2]string{{"lxc.apparmor.profile", "unconfined"}, {"lxc.environment", "PASS=x"}},
	}
	c.Guests = []*Guest{vm, ct}
	return c
}

func TestGuestConfigExtras(t *testing.T) {
	t.Parallel()
	s := NewServer(configCluster())
	t.Cleanup(s.Close)

	vm := get(t, s, "/nodes/pve1/qemu/100/config").body["data"].(map[string]any)
	if vm["cipassword"] != "**********" {
		t.Errorf("cipassword = %v, want PVE's mask", vm["cipassword"])
	}
	for k, want := range map[string]any{
		"ciuser": "admin", "hookscript": "local:snippets/hook.pl", "cores": "4",
		"args":    "-fw_cfg name=opt/secret,string=s3cr3t",
		"sshkeys": "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIabc%20me%40host%0A",
		"parent":  "a", "name": "vm",
	} {
		if vm[k] != want {
			t.Errorf("%s = %v, want %v", k, vm[k], want)
		}
	}
	if _, ok := vm["lxc"]; ok {
		t.Error("a VM config has an lxc key")
	}

	ct := get(t, s, "/nodes/pve1/lxc/200/config").body["data"].(map[string]any)
	raw, _ := json.Marshal(ct["lxc"])
	if string(raw) != `[["lxc.apparmor.profile","unconfined"],["lxc.environment","PASS=x"]]` {
		t.Errorf("lxc = %s, want PVE's list of [key, value] pairs", raw)
	}
	if ct["env"] != "TOKEN=abc\x00MODE=x" || ct["entrypoint"] != "/app --key=k" || ct["hostname"] != "ct" {
		t.Errorf("container config = %v", ct)
	}
	if _, ok := ct["parent"]; ok {
		t.Error("a guest without snapshots has a parent")
	}
	// The model keeps the clear value; only the API masks it.
	if g, _ := s.Guest(100); g.Config["cipassword"] != "hunter2" {
		t.Errorf("model cipassword = %q", g.Config["cipassword"])
	}
}
