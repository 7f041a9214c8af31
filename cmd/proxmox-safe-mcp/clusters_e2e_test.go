package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// clustersSetup writes a clusters file for the named fakes (lab's secret
// from a file, the others' from a variable) and returns its path and the
// environment the binary needs (a state directory of the test's own).
func clustersSetup(t *testing.T, state string, fakes map[string]*proxmoxtest.Server, order ...string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	secret := filepath.Join(dir, "lab.secret")
	if err := os.WriteFile(secret, []byte(proxmoxtest.DefaultTokenSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("# clusters of the test\nclusters:\n")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "XDG_STATE_HOME=" + state, "TMPDIR=" + testTmpDir}
	for _, name := range order {
		f := fakes[name]
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n    token_id: %q\n    tls_fingerprint: %q\n    allowed_nodes: [pve1, pve2]\n",
			name, f.URL, proxmoxtest.DefaultTokenID, f.Fingerprint())
		if name == "lab" {
			fmt.Fprintf(&b, "    token_secret_file: %s\n    profile: safe\n", secret)
		} else {
			v := strings.ToUpper(name) + "_TOKEN"
			fmt.Fprintf(&b, "    token_secret_env: %s\n    protected: [\"102\"]\n", v)
			env = append(env, v+"="+proxmoxtest.DefaultTokenSecret)
		}
	}
	path := filepath.Join(dir, "clusters.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, append(env, "PROXMOX_SAFE_CLUSTERS_FILE="+path)
}

func connectBinary(t *testing.T, env []string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary(t))
	cmd.Env = env
	cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestClustersFileServer: the built binary with a clusters file of three
// fakes (one down) serves them from one server: cluster_list reports the
// one down inline, the reads across clusters over "*" (list_guests,
// health_report, storage_list, backup_coverage) answer for the other two
// and report the down one, a mutation runs on each with its own phrase,
// lab's phrase is refused on prod and a call naming no cluster reaches
// none; each cluster's audit log is its
// own (clusters/<name>/ in the state directory). A second server sharing
// the state directory then mutates on lab too, and lab's log verifies.
func TestClustersFileServer(t *testing.T) {
	t.Parallel()
	fakes := map[string]*proxmoxtest.Server{}
	for _, n := range []string{"lab", "prod", "down"} {
		fakes[n] = proxmoxtest.NewServer(nil)
		t.Cleanup(fakes[n].Close)
	}
	fakes["down"].Close()
	state := t.TempDir()
	_, env := clustersSetup(t, state, fakes, "lab", "prod", "down")
	cs := connectBinary(t, env)

	res := call(t, cs, "cluster_list", map[string]any{})
	if res.IsError || !strings.Contains(textOf(res), "3 clusters, 1 unreachable") {
		t.Fatalf("cluster_list: %s", textOf(res))
	}
	for _, tool := range []string{"list_guests", "health_report", "storage_list", "backup_coverage"} {
		res = call(t, cs, tool, map[string]any{"cluster": "*"})
		out := structured(t, res)
		if res.IsError || len(out["clusters"].([]any)) != 3 || !strings.Contains(textOf(res), "on 2 clusters; 1 unreachable: down") {
			t.Fatalf("%s *: %s", tool, textOf(res))
		}
	}

	// The privilege check began with the first call; once its last
	// request reached each running cluster, the log below holds only what
	// the next calls send.
	waitFor(t, "the privilege check's requests", func() bool {
		for _, name := range []string{"lab", "prod"} {
			if !privilegesRead(fakes[name]) {
				return false
			}
		}
		return true
	})
	for _, f := range fakes {
		f.ResetRequests()
	}
	if res := call(t, cs, "guest_power", shutdown100); !res.IsError || !strings.Contains(textOf(res), "cluster: is required") {
		t.Errorf("no cluster: %s", textOf(res))
	}
	if n := len(fakes["lab"].Requests()) + len(fakes["prod"].Requests()); n != 0 {
		t.Errorf("%d requests after a call naming no cluster", n)
	}
	args := func(cluster, phrase string) map[string]any {
		m := map[string]any{"cluster": cluster, "approval": phrase}
		for k, v := range shutdown100 {
			m[k] = v
		}
		return m
	}
	if res := call(t, cs, "guest_power", args("prod", phrase100+" cluster=lab")); !res.IsError || !strings.Contains(textOf(res), phrase100+" cluster=prod") {
		t.Errorf("lab's phrase on prod: %s", textOf(res))
	}
	if m := fakes["prod"].MutatingRequests(); len(m) != 0 {
		t.Errorf("prod: mutating requests after lab's phrase: %v", m)
	}
	for _, name := range []string{"lab", "prod"} {
		res := call(t, cs, "guest_power", args(name, phrase100+" cluster="+name))
		if res.IsError || structured(t, res)["cluster"] != name {
			t.Fatalf("shutdown on %s: %s", name, textOf(res))
		}
		if n := len(fakes[name].MutatingRequests()); n != 1 {
			t.Errorf("%s: %d mutating requests", name, n)
		}
		log := filepath.Join(state, "proxmox-safe-mcp", "clusters", name, "audit.jsonl")
		b, err := os.ReadFile(log)
		if err != nil || !strings.Contains(string(b), `"cluster":"`+name+`: https://`) {
			t.Errorf("%s's audit log %s: %v\n%s", name, log, err, b)
		}
		if strings.Contains(string(b), `"cluster":"`+map[string]string{"lab": "prod", "prod": "lab"}[name]+`: `) {
			t.Errorf("%s's audit log holds the other cluster's records", name)
		}
	}

	// A second server sharing the state directory: its mutation on lab
	// goes to the same per-cluster log, which still verifies.
	second := connectBinary(t, env)
	start := map[string]any{"cluster": "lab", "node": "pve2", "type": "qemu", "vmid": 103, "action": "start", "approval": "APPROVE start pve2/qemu/103 cluster=lab"}
	if res := call(t, second, "guest_power", start); res.IsError {
		t.Fatalf("second server, start on lab: %s", textOf(res))
	}
	labLog := filepath.Join(state, "proxmox-safe-mcp", "clusters", "lab", "audit.jsonl")
	out, errOut, code := runBin(t, env, "audit", "verify", labLog)
	if code != 0 {
		t.Errorf("audit verify %s: exit %d\n%s%s", labLog, code, out, errOut)
	}
}

// TestClustersFileStarts: a minimal one-cluster file and the environment
// alone both start (doctor passes on each); doctor over a file with a
// cluster down says which one failed; a secret written inline is warned
// about; PVE_URL beside a file is refused.
func TestClustersFileStarts(t *testing.T) {
	t.Parallel()
	lab := proxmoxtest.NewServer(nil)
	t.Cleanup(lab.Close)
	state := t.TempDir()

	_, env := clustersSetup(t, state, map[string]*proxmoxtest.Server{"lab": lab}, "lab")
	// Exit 3: working, but the fake's token holds every privilege.
	if out, errOut, code := runBin(t, env, "doctor"); code != 0 && code != 3 || !strings.Contains(out, "all 1 clusters work") {
		t.Errorf("doctor, one-cluster file: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := runBin(t, env, "tools"); code != 0 || strings.Contains(out, "cluster_list") || !strings.Contains(out, "guest_power") {
		t.Errorf("tools, one-cluster file: exit %d\n%s%s", code, out, errOut)
	}
	envOnly := cleanEnv("PVE_URL="+lab.URL, "PVE_API_TOKEN_ID="+proxmoxtest.DefaultTokenID,
		"PVE_API_TOKEN_SECRET="+proxmoxtest.DefaultTokenSecret, "PVE_TLS_FINGERPRINT="+lab.Fingerprint(), "PVE_ALLOWED_NODES=pve1")
	if out, errOut, code := runBin(t, envOnly, "doctor"); code != 0 && code != 3 {
		t.Errorf("doctor, environment only: exit %d\n%s%s", code, out, errOut)
	}

	down := proxmoxtest.NewServer(nil)
	down.Close()
	_, env2 := clustersSetup(t, t.TempDir(), map[string]*proxmoxtest.Server{"lab": lab, "prod": down}, "lab", "prod")
	out, errOut, code := runBin(t, env2, "doctor")
	if code == 0 || code == 3 || !strings.Contains(out, "1 of 2 clusters failed: prod") {
		t.Errorf("doctor with prod down: exit %d\n%s%s", code, out, errOut)
	}

	dir := t.TempDir()
	inline := filepath.Join(dir, "inline.yaml")
	body := fmt.Sprintf("clusters:\n  - name: lab\n    url: %s\n    token_id: %q\n    token_secret: %s\n    tls_fingerprint: %q\n", lab.URL, proxmoxtest.DefaultTokenID, proxmoxtest.DefaultTokenSecret, lab.Fingerprint())
	if err := os.WriteFile(inline, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	envInline := cleanEnv("PROXMOX_SAFE_CLUSTERS_FILE=" + inline)
	_, errOut, code = runBin(t, envInline, "tools")
	if code != 0 || !strings.Contains(errOut, "token_secret is written inline") || !strings.Contains(errOut, "readable by its group or others") {
		t.Errorf("inline secret: exit %d\n%s", code, errOut)
	}
	if strings.Contains(errOut, proxmoxtest.DefaultTokenSecret) {
		t.Error("the inline secret is in the output")
	}
	_, errOut, code = runBin(t, append(envInline, "PVE_URL="+lab.URL), "tools")
	if code != 2 || !strings.Contains(errOut, "unset PVE_URL") {
		t.Errorf("PVE_URL beside a file: exit %d\n%s", code, errOut)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("clusters:\n  - name: lab\n    urll: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runBin(t, cleanEnv("PROXMOX_SAFE_CLUSTERS_FILE="+bad), "tools"); code != 2 || !strings.Contains(errOut, "urll") {
		t.Errorf("unknown key: exit %d\n%s", code, errOut)
	}
}

// TestClustersFileDoctorJSON: `doctor --json` over a clusters file prints
// one JSON document: each cluster's report (the one-cluster document) by
// name, in the order configured, which failed, and the exit code, the
// worst, which the command returns.
func TestClustersFileDoctorJSON(t *testing.T) {
	t.Parallel()
	lab := proxmoxtest.NewServer(nil)
	t.Cleanup(lab.Close)
	down := proxmoxtest.NewServer(nil)
	down.Close()
	type report struct {
		Checks []struct {
			Status string `json:"status"`
		} `json:"checks"`
		Result   string `json:"result"`
		ExitCode int    `json:"exit_code"`
	}
	var doc struct {
		Clusters []struct {
			Name   string `json:"name"`
			Report report `json:"report"`
		} `json:"clusters"`
		OK       bool     `json:"ok"`
		Failed   []string `json:"failed"`
		ExitCode int      `json:"exit_code"`
	}
	run := func(fakes map[string]*proxmoxtest.Server, order ...string) int {
		t.Helper()
		_, env := clustersSetup(t, t.TempDir(), fakes, order...)
		out, errOut, code := runBin(t, env, "doctor", "--json")
		doc.Clusters, doc.Failed = nil, nil
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&doc); err != nil || dec.More() {
			t.Fatalf("stdout is not one JSON document (%v):\n%s\n%s", err, out, errOut)
		}
		if strings.Contains(out, "== ") || strings.Contains(out, "[ok]") {
			t.Errorf("text mixed into the JSON:\n%s", out)
		}
		return code
	}

	code := run(map[string]*proxmoxtest.Server{"lab": lab, "prod": down}, "lab", "prod")
	if code != 1 || doc.ExitCode != code || doc.OK || strings.Join(doc.Failed, ",") != "prod" || len(doc.Clusters) != 2 {
		t.Fatalf("lab up, prod down: exit %d, %+v", code, doc)
	}
	l, p := doc.Clusters[0], doc.Clusters[1]
	if l.Name != "lab" || (l.Report.ExitCode != 0 && l.Report.ExitCode != 3) || len(l.Report.Checks) < 4 || l.Report.Result == "" {
		t.Errorf("lab: %+v", l)
	}
	if p.Name != "prod" || p.Report.ExitCode != 1 || !strings.Contains(p.Report.Result, "problem") {
		t.Errorf("prod: %+v", p)
	}

	code = run(map[string]*proxmoxtest.Server{"lab": lab, "prod": lab}, "lab", "prod")
	if (code != 0 && code != 3) || doc.ExitCode != code || !doc.OK || len(doc.Failed) != 0 || len(doc.Clusters) != 2 {
		t.Errorf("both up: exit %d, %+v", code, doc)
	}
	// One cluster in the file: the same shape.
	code = run(map[string]*proxmoxtest.Server{"lab": lab}, "lab")
	if (code != 0 && code != 3) || !doc.OK || len(doc.Clusters) != 1 || doc.Clusters[0].Name != "lab" || doc.Clusters[0].Report.ExitCode != code {
		t.Errorf("one cluster: exit %d, %+v", code, doc)
	}
}
