package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/demo"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// freshClone copies the repository's tracked files (as they are in the
// working tree) into a temporary directory with nothing beside it, so no
// ../shared, and builds the binary there as the README says. It returns
// the clone's directory and the binary.
func freshClone(t *testing.T) (dir, bin string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): the fresh-clone test needs git ls-files", err)
	}
	parent := t.TempDir()
	dir = filepath.Join(parent, "proxmox-safe-mcp")
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, "shared")); err == nil {
		t.Fatal("the clone has a ../shared beside it")
	}
	bin = filepath.Join(parent, "bin", "proxmox-safe-mcp")
	// README, "MCP client configuration"; -trimpath keeps the build cache
	// independent of the clone's temporary directory, so a warm run does
	// not compile the module again (42 s of a 46 s package before).
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/proxmox-safe-mcp")
	build.Dir = dir
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in the fresh clone: %v\n%s", err, b)
	}
	return dir, bin
}

// TestReadmeFromFreshClone follows the README with a fake Proxmox VE:
// a fresh clone (no ../shared), the quick start's token (the role the
// README creates, the secret in a file, the fingerprint pinned), then
//
//   - only PVE_URL and the token: the server starts and serves reads, the
//     guests' data is in the text content, and doctor exits 0;
//   - plus the node allowlist of the quick start: a mutation is refused
//     with a machine-readable refusal, then approved and submitted, and
//     doctor still exits 0.
func TestReadmeFromFreshClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary in a fresh copy of the repository")
	}
	t.Parallel()
	dir, bin := freshClone(t)

	const tokenID = "mcp@pve!agent" // README, quick start step 1
	const secret = "3c0ffee0-1111-4222-8333-444455556666"
	cluster := proxmoxtest.DemoCluster()
	cluster.Tokens = map[string]*proxmoxtest.Token{tokenID: {Secret: secret,
		Privileges: map[string][]string{"/": demo.ReadmeRolePrivileges}}}
	fake := proxmoxtest.NewServer(cluster)
	defer fake.Close()

	home := t.TempDir()
	secretFile := filepath.Join(home, "token")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"PVE_URL=" + fake.URL,
		"PVE_API_TOKEN_ID=" + tokenID,
		"PVE_API_TOKEN_SECRET_FILE=" + secretFile,
		"PVE_TLS_FINGERPRINT=" + fake.Fingerprint(), // step 2: a self-signed cluster
	}

	doctor := func(t *testing.T, env []string) {
		t.Helper()
		cmd := exec.Command(bin, "doctor")
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
			t.Errorf("doctor: %v\n%s", err, out.String())
		}
		if strings.Contains(out.String(), secret) {
			t.Error("doctor printed the secret")
		}
	}
	serve := func(t *testing.T, env []string) (*mcp.ClientSession, *syncBuffer) {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Dir, cmd.Env = dir, env
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		cs, err := newClient().Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateWait}, nil)
		if err != nil {
			t.Fatalf("the server did not start: %v\nstderr:\n%s", err, stderr.String())
		}
		t.Cleanup(func() { cs.Close() })
		return cs, stderr
	}

	// 1. Only PVE_URL and the token.
	t.Run("minimal", func(t *testing.T) {
		doctor(t, env)
		cs, stderr := serve(t, env)
		res := call(t, cs, "list_guests", map[string]any{})
		text := textOf(res)
		if res.IsError || !strings.Contains(text, "\n100\tweb-01\tpve1\t") {
			t.Errorf("list_guests: the guests' data is not in the text content: %q", text)
		}
		lt, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range lt.Tools {
			if tool.Name == "guest_power" {
				t.Error("guest_power is listed although no node is allowed")
			}
		}
		cs.Close()
		if strings.Contains(stderr.String(), secret) {
			t.Error("the server logged the secret")
		}
	})

	// 2. The quick start's node allowlist.
	full := append(env[:len(env):len(env)], "PVE_ALLOWED_NODES=pve1,pve2")
	t.Run("quick start", func(t *testing.T) {
		cs, stderr := serve(t, full)
		args := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}
		res := call(t, cs, "guest_power", args)
		text := textOf(res)
		var refusal struct {
			Error struct {
				Kind           string `json:"kind"`
				ActionTaken    string `json:"action_taken"`
				ApprovalPhrase string `json:"approval_phrase"`
				CurrentState   struct {
					Status string `json:"status"`
				} `json:"current_state"`
			} `json:"error"`
		}
		last := text[strings.LastIndexByte(text, '\n')+1:]
		if !res.IsError || json.Unmarshal([]byte(last), &refusal) != nil || refusal.Error.Kind != "approval_required" ||
			refusal.Error.ActionTaken != "none" || refusal.Error.CurrentState.Status != "running" {
			t.Fatalf("guest_power without approval: isError %t, text %q", res.IsError, text)
		}
		if n := len(fake.MutatingRequests()); n != 0 {
			t.Fatalf("%d mutating requests after the refusal", n)
		}
		args["approval"] = refusal.Error.ApprovalPhrase
		res = call(t, cs, "guest_power", args)
		if res.IsError || !upidRe.MatchString(structured(t, res)["upid"].(string)) {
			t.Fatalf("guest_power approved: %s", textOf(res))
		}
		if n := len(fake.MutatingRequests()); n != 1 {
			t.Errorf("%d mutating requests after the approval, want 1", n)
		}
		cs.Close()
		if strings.Contains(stderr.String(), secret) {
			t.Error("the server logged the secret")
		}
		// The audit log is where the README says it goes by default.
		audit, err := os.ReadFile(filepath.Join(home, "state", "proxmox-safe-mcp", "audit.jsonl"))
		if err != nil || !bytes.Contains(audit, []byte(`"event":"refused"`)) || !bytes.Contains(audit, []byte(`"event":"submitted"`)) {
			t.Errorf("default audit log: %v\n%s", err, audit)
		}
		doctor(t, full)
	})
}
