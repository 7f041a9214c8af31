package proxmoxtest

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

func put(t *testing.T, s *Server, path string, form url.Values) answer {
	t.Helper()
	return call(t, s, http.MethodPut, path, form, "")
}

// pendingOf returns GET …/pending as key → entry.
func pendingOf(t *testing.T, s *Server, path string) map[string]map[string]any {
	t.Helper()
	a := get(t, s, path+"/pending")
	if a.code != 200 {
		t.Fatalf("pending: %q %s", a.status, a.raw)
	}
	out := map[string]map[string]any{}
	for _, e := range a.body["data"].([]any) {
		m := e.(map[string]any)
		out[m["key"].(string)] = m
	}
	return out
}

func configOf(t *testing.T, s *Server, path string) map[string]any {
	t.Helper()
	return get(t, s, path+"/config").body["data"].(map[string]any)
}

func TestConfigUpdateStoppedAppliesAtOnce(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	const vm = "/nodes/pve2/qemu/103" // stopped
	a := put(t, s, vm+"/config", url.Values{"cores": {"6"}, "memory": {"4096"}, "tags": {"b;a,a"}, "digest": {configOf(t, s, vm)["digest"].(string)}})
	if a.code != 200 || a.body["data"] != nil {
		t.Fatalf("PUT config: %q %s, want 200 and data null", a.status, a.raw)
	}
	c := configOf(t, s, vm)
	if c["cores"] != 6.0 || c["memory"] != "4096" || c["tags"] != "a;b" {
		t.Errorf("config after = cores %v memory %v tags %v", c["cores"], c["memory"], c["tags"])
	}
	if p := pendingOf(t, s, vm); p["cores"]["pending"] != nil {
		t.Errorf("a stopped VM has pending changes: %v", p["cores"])
	}
	g, _ := s.Guest(103)
	if g.CPUs != 6 || g.MaxMem != 4096<<20 {
		t.Errorf("model = %d cpus, %d bytes", g.CPUs, g.MaxMem)
	}
}

func TestConfigUpdateRunningHotplugVsPending(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	const vm = "/nodes/pve1/qemu/100" // running, no memory hotplug
	before := configOf(t, s, vm)
	up := upidOf(t, post(t, s, vm+"/config", url.Values{"cores": {"8"}, "memory": {"16384"}, "name": {"web-01b"}, "digest": {before["digest"].(string)}}))
	if st, _ := pollUntilStopped(t, s, "pve1", up); st["exitstatus"] != "OK" || st["type"] != "qmconfig" {
		t.Fatalf("task = %v", st)
	}
	p := pendingOf(t, s, vm)
	if p["cores"]["value"] != 4.0 || p["cores"]["pending"] != "8" {
		t.Errorf("cores = %v, want value 4 pending 8 (cores is not hotpluggable)", p["cores"])
	}
	if p["memory"]["pending"] != "16384" {
		t.Errorf("memory = %v, want pending 16384 (no memory hotplug)", p["memory"])
	}
	if p["name"]["value"] != "web-01b" || p["name"]["pending"] != nil {
		t.Errorf("name = %v, want applied (fast-plug option)", p["name"])
	}
	if c := configOf(t, s, vm); c["cores"] != "8" || c["digest"] == before["digest"] {
		t.Errorf("GET config shows cores %v (want the pending 8) and digest changed: %v", c["cores"], c["digest"] != before["digest"])
	}
	if c := get(t, s, vm+"/config?current=1").body["data"].(map[string]any); c["cores"] != 4.0 {
		t.Errorf("current=1 cores = %v, want 4", c["cores"])
	}
	// A stop and start applies what was pending.
	pollUntilStopped(t, s, "pve1", upidOf(t, post(t, s, vm+"/status/stop", nil)))
	pollUntilStopped(t, s, "pve1", upidOf(t, post(t, s, vm+"/status/start", nil)))
	if p := pendingOf(t, s, vm); p["cores"]["value"] != 8.0 || p["cores"]["pending"] != nil {
		t.Errorf("after restart cores = %v, want applied", p["cores"])
	}
}

func TestContainerRunningHotplug(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	const ct = "/nodes/pve1/lxc/200" // running
	if a := put(t, s, ct+"/config", url.Values{"cores": {"3"}, "memory": {"1024"}, "ostype": {"alpine"}}); a.code != 200 {
		t.Fatalf("PUT: %q", a.status)
	}
	p := pendingOf(t, s, ct)
	if p["cores"]["value"] != 3.0 || p["memory"]["pending"] != nil || p["ostype"]["pending"] != "alpine" {
		t.Errorf("cores %v memory %v ostype %v; want cores and memory applied, ostype pending", p["cores"], p["memory"], p["ostype"])
	}
}

func TestConfigUpdateRefusals(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	tests := []struct {
		name, method, path string
		form               url.Values
		code               int
		reason             string
		param              string // for 400s: the parameter the error names
	}{
		{"qemu digest mismatch", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"cores": {"2"}, "digest": {"0123456789abcdef0123456789abcdef01234567"}}, 500, qemuDigestMismatch, ""},
		{"lxc digest mismatch", "PUT", "/nodes/pve1/lxc/200/config", url.Values{"cores": {"2"}, "digest": {"0123456789abcdef0123456789abcdef01234567"}}, 500, lxcDigestMismatch, ""},
		{"locked VM", "POST", "/nodes/pve1/qemu/102/config", url.Values{"cores": {"2"}}, 500, "VM is locked (backup)", ""},
		{"nothing to do", "PUT", "/nodes/pve2/qemu/103/config", url.Values{}, 500, "no options specified", ""},
		{"balloon above memory", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"balloon": {"999999"}}, 500, "balloon value too large (must be smaller than assigned memory)", ""},
		{"args is root-only", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"args": {"-no-reboot"}}, 500, "only root can set 'args' config", ""},
		{"unknown key", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"hostname": {"x"}}, 400, "Parameter verification failed.", "hostname"},
		{"index out of range", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"scsi31": {"local-lvm:1"}}, 400, "Parameter verification failed.", "scsi31"},
		{"schema spelling", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"scsi[n]": {"local-lvm:1"}}, 400, "Parameter verification failed.", "scsi[n]"},
		{"bad name", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"name": {"not a name"}}, 400, "Parameter verification failed.", "name"},
		{"cores zero", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"cores": {"0"}}, 400, "Parameter verification failed.", "cores"},
		{"delete unknown", "PUT", "/nodes/pve2/qemu/103/config", url.Values{"delete": {"hostname"}}, 400, "Parameter verification failed.", "delete"},
		{"shrink lxc", "PUT", "/nodes/pve1/lxc/200/resize", url.Values{"disk": {"rootfs"}, "size": {"1G"}}, 500, "unable to shrink disk size", ""},
		{"same size lxc", "PUT", "/nodes/pve1/lxc/200/resize", url.Values{"disk": {"rootfs"}, "size": {"8G"}}, 500, "disk is already at specified size", ""},
		{"lxc resize digest", "PUT", "/nodes/pve1/lxc/200/resize", url.Values{"disk": {"rootfs"}, "size": {"+1G"}, "digest": {"00"}}, 500, lxcDigestMismatch, ""},
		{"qemu disk key", "PUT", "/nodes/pve2/qemu/103/resize", url.Values{"disk": {"rootfs"}, "size": {"+1G"}}, 400, "Parameter verification failed.", "disk"},
		{"bad size", "PUT", "/nodes/pve2/qemu/103/resize", url.Values{"disk": {"scsi0"}, "size": {"-1G"}}, 400, "Parameter verification failed.", "size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := call(t, s, tt.method, tt.path, tt.form, "")
			if a.code != tt.code || a.status != strconv.Itoa(tt.code)+" "+tt.reason {
				t.Errorf("answer %q, want %d %s", a.status, tt.code, tt.reason)
			}
			if tt.param != "" {
				if errs, _ := a.body["errors"].(map[string]any); errs[tt.param] == nil {
					t.Errorf("errors = %v, want one for %s", a.body["errors"], tt.param)
				}
			}
		})
	}
	if n := len(s.Tasks()); n != 0 {
		t.Errorf("%d tasks started by refused requests", n)
	}
}

func TestResizeQemuTaskErrorsAndGrowth(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	const vm = "/nodes/pve2/qemu/103" // 100 GiB scsi0
	d := configOf(t, s, vm)["digest"].(string)
	tests := []struct{ size, digest, exit string }{
		{"10G", "", "shrinking disks is not supported"},
		{"+1G", "0123456789abcdef0123456789abcdef01234567", qemuDigestMismatch},
		{"+8G", d, "OK"},
	}
	for _, tt := range tests {
		form := url.Values{"disk": {"scsi0"}, "size": {tt.size}}
		if tt.digest != "" {
			form.Set("digest", tt.digest)
		}
		st, _ := pollUntilStopped(t, s, "pve2", upidOf(t, put(t, s, vm+"/resize", form)))
		if st["exitstatus"] != tt.exit || st["type"] != "resize" {
			t.Errorf("resize %s: task %v, want type resize exit %q", tt.size, st, tt.exit)
		}
	}
	if got := configOf(t, s, vm)["scsi0"]; got != "local-lvm:vm-103-disk-0,iothread=1,size=108G" {
		t.Errorf("scsi0 = %v, want size=108G", got)
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[uint64]string{1 << 40: "1T", 40 << 30: "40G", 1536 << 20: "1536M", 1025: "1025", 4 << 10: "4K"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %s, want %s", n, got, want)
		}
	}
}
