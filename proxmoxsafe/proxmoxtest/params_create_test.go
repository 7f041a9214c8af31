package proxmoxtest

import (
	"net/url"
	"testing"
)

// TestCreateParamsPerType: the two create endpoints check their own
// parameter lists: a container's key is unknown to the VM create and the
// other way round, and each type has its own arch enumeration.
func TestCreateParamsPerType(t *testing.T) {
	t.Parallel()
	s := provisionFake(t)
	vm := url.Values{"vmid": {"150"}, "name": {"x"}, "scsi0": {"local-lvm:8"}}
	ct := url.Values{"vmid": {"151"}, "hostname": {"c"}, "ostemplate": {"local:vztmpl/debian-13-standard_13.1-1_amd64.tar.zst"}, "rootfs": {"local-lvm:8"}}
	with := func(v url.Values, k, val string) url.Values {
		out := url.Values{k: {val}}
		for kk, vv := range v {
			out[kk] = vv
		}
		return out
	}
	const undefined = "property is not defined in schema and the schema does not allow additional properties"
	tests := []struct {
		name, path string
		form       url.Values
		param, msg string
	}{
		{"container key on a VM", "/nodes/pve1/qemu", with(vm, "rootfs", "local-lvm:8"), "rootfs", undefined},
		{"VM key on a container", "/nodes/pve1/lxc", with(ct, "bios", "ovmf"), "bios", undefined},
		{"container arch on a VM", "/nodes/pve1/qemu", with(vm, "arch", "amd64"), "arch", "value 'amd64' does not have a value in the enumeration 'x86_64, aarch64'"},
		{"VM arch on a container", "/nodes/pve1/lxc", with(ct, "arch", "x86_64"), "arch", "value 'x86_64' does not have a value in the enumeration 'amd64, i386, arm64, armhf, riscv32, riscv64'"},
	}
	for _, tt := range tests {
		a := post(t, s, tt.path, tt.form)
		errs, _ := a.body["errors"].(map[string]any)
		if a.code != 400 || errs[tt.param] != tt.msg {
			t.Errorf("%s: %s %v, want 400 with %s: %q", tt.name, a.status, errs, tt.param, tt.msg)
		}
	}
	if n := len(s.Tasks()); n != 0 {
		t.Errorf("%d tasks started by refused creates", n)
	}
}
