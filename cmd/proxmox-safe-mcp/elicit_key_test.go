package main

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestElicitKeyFile: a missing key file is created 0600 with 32 random
// bytes as hex and read back; a key too short, too long, not hex or not a
// regular file is refused with what to do, never showing the value; a
// missing file is not created when asked not to. A loose mode is not
// refused here: it draws the warning every secret file does
// (TestLooseSecretFiles).
func TestElicitKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "elicit.key")
	if _, _, err := loadElicitKey(path, false, ""); !os.IsNotExist(err) {
		t.Fatalf("not created when not asked: %v", err)
	}
	key, created, err := loadElicitKey(path, true, "")
	if err != nil || !created || len(key) != 32 {
		t.Fatalf("create: %d bytes, created %t, %v", len(key), created, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	again, created, err := loadElicitKey(path, true, "")
	if err != nil || created || hex.EncodeToString(again) != hex.EncodeToString(key) {
		t.Fatalf("read back: created %t, %v", created, err)
	}
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := strings.Repeat("ab", 32)
	for name, tc := range map[string]struct {
		path, want string
	}{
		"16 bytes":    {write("short.key", strings.Repeat("ab", 16), 0o600), "exactly 32 random bytes"},
		"33 bytes":    {write("long.key", good+"cd", 0o600), "exactly 32 random bytes"},
		"not hex":     {write("text.key", strings.Repeat("zz", 32), 0o600), "as 64 hex digits"},
		"a directory": {dir, "not a regular file"},
	} {
		_, _, err := loadElicitKey(tc.path, true, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), good) || strings.Contains(err.Error(), "abab")) {
			t.Errorf("%s: the error shows the value: %v", name, err)
		}
	}
	for _, mode := range []os.FileMode{0o400, 0o640, 0o644} {
		if _, _, err := loadElicitKey(write("ok.key", good+"\n", mode), false, ""); err != nil {
			t.Errorf("a %04o key: %v", mode, err)
		}
	}
}

// TestElicitKeyRefusedAtStart: the server refuses to start with a bad key
// file, naming the setting and the fix, before serving anything; a key
// readable by others starts with the warning every secret file draws; the
// demo needs a grant directory beside a key file (the used nonces live
// there).
func TestElicitKeyRefusedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	grants := map[string]string{"PROXMOX_SAFE_GRANT_DIR": filepath.Join(dir, "grants")}
	short := filepath.Join(dir, "short.key")
	if err := os.WriteFile(short, []byte(strings.Repeat("ab", 16)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runIn(t, grants, "--demo", "--approvals", "power=elicit", "--elicit-key-file", short, "call", "list_guests")
	if code != exitUsage || !strings.Contains(errOut, "PROXMOX_SAFE_ELICIT_KEY_FILE") || !strings.Contains(errOut, "openssl rand -hex 32") {
		t.Fatalf("a short key: exit %d\n%s", code, errOut)
	}
	loose := filepath.Join(dir, "elicit.key")
	if err := os.WriteFile(loose, []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runIn(t, grants, "--demo", "--approvals", "power=elicit", "--elicit-key-file", loose, "call", "list_guests")
	if code != exitOK || !strings.Contains(errOut, "PROXMOX_SAFE_ELICIT_KEY_FILE") || !strings.Contains(errOut, "chmod 600") {
		t.Fatalf("a key readable by others: exit %d, want a start with a warning\n%s", code, errOut)
	}
	_, errOut, code = runIn(t, map[string]string{}, "--demo", "--elicit-key-file", filepath.Join(dir, "new.key"), "call", "list_guests")
	if code != exitUsage || !strings.Contains(errOut, "PROXMOX_SAFE_GRANT_DIR") {
		t.Fatalf("demo key without a grant directory: exit %d\n%s", code, errOut)
	}
}

// TestElicitAcrossServerRestart: real stdio servers in turn with one key
// file and grant directory: an elicitation asked by the first is answered
// by the second (one shutdown), and the same answer replayed to a third is
// refused as already answered; the key file is 0600.
func TestElicitAcrossServerRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "elicit.key")
	env := cleanEnv("PROXMOX_SAFE_GRANT_DIR="+filepath.Join(dir, "grants"), "PROXMOX_SAFE_ELICIT_KEY_FILE="+keyFile)
	call := func(params *mcp.CallToolParams) *mcp.CallToolResult {
		t.Helper()
		cmd := exec.Command(binary(t), "--demo", "--approvals", "power=elicit")
		cmd.Env = env
		var stderr syncBuffer
		cmd.Stderr = &stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e-test", Version: "0"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				t.Error("the client was asked directly")
				return nil, errors.New("unexpected")
			},
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		})
		cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateWait}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), params)
		if err != nil {
			t.Fatalf("CallTool: %v\n%s", err, stderr.String())
		}
		return res
	}
	first := call(&mcp.CallToolParams{Name: "guest_power", Arguments: shutdown100})
	if first.RequestState == "" || first.InputRequests["approve"] == nil {
		t.Fatalf("the first call asked nothing: %s", textOf(first))
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	answer := &mcp.CallToolParams{Name: "guest_power", Arguments: shutdown100, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{"approve": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": "100"}}}}
	if res := call(answer); res.IsError || !strings.Contains(textOf(res), "UPID:") {
		t.Fatalf("answered after a restart: %s", textOf(res))
	}
	if res := call(answer); !res.IsError || !strings.Contains(textOf(res), "already answered") || strings.Contains(textOf(res), "UPID:") {
		t.Fatalf("replayed after another restart: %s", textOf(res))
	}
}

// TestElicitKeyCredentialOwner: a key from systemd's credentials directory
// may belong to another user (systemd writes it root-owned, 0400 plus an
// ACL for the service); anywhere else a key owned by another user is
// refused. Changing a file's owner needs root.
func TestElicitKeyCredentialOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the key file another owner")
	}
	creds := t.TempDir()
	path := filepath.Join(creds, "elicit.key")
	if err := os.WriteFile(path, []byte(strings.Repeat("ab", 32)+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadElicitKey(path, false, creds); err != nil {
		t.Errorf("a credential owned by another user: %v", err)
	}
	if _, _, err := loadElicitKey(path, false, ""); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("a key owned by another user outside the credentials directory: %v", err)
	}
}
