package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeStartsOnBadLogAndRefusesMutations: a server no longer verifies
// its audit log before answering (a long log delayed every start); it
// verifies it in the background. A log that does not verify
// then still refuses every mutation, with the reason and what to do,
// sends nothing mutating, and is reported on stderr; reads are served.
// (call and doctor still verify before anything: TestStartupAdviceOnBadLog.)
func TestServeStartsOnBadLogAndRefusesMutations(t *testing.T) {
	t.Parallel()
	path := tornKeyedLog(t)
	before, _ := os.ReadFile(path)
	srv, envMap := fakeEnv(t, "PROXMOX_SAFE_AUDIT_LOG", path, "PVE_ALLOWED_NODES", "pve1,pve2")
	p := startProc(t, "", cleanEnv(envList(envMap)...))
	if res := call(t, p.cs, "list_guests", map[string]any{}); res.IsError {
		t.Fatalf("list_guests: %s", textOf(res))
	}
	var args map[string]any
	json.Unmarshal([]byte(startGuest103), &args)
	res, err := p.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "guest_power", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	msg := textOf(res)
	for _, want := range []string{"does not verify", "no trailing newline", "no action was taken"} {
		if !res.IsError || !strings.Contains(msg, want) {
			t.Errorf("guest_power on a log that does not verify: isError %v, %q lacks %q", res.IsError, msg, want)
		}
	}
	if m := srv.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests: %d", len(m))
	}
	p.cs.Close()
	p.stdinW.Close()
	if code := p.wait(t); code != exitOK {
		t.Errorf("exit %d", code)
	}
	if stderr := p.stderr.String(); !strings.Contains(stderr, "the audit log does not verify") || !strings.Contains(stderr, "audit verify "+path) {
		t.Errorf("stderr does not report the log: %s", stderr)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the log was changed")
	}
}

// TestServeVerifiesLogFromFirstCall: over stdio the audit log is verified
// from the first tools/call on (watchFirstCall), or the first
// record: a server that is only initialized and listed, as a host does
// with every configured server, never reads the log, so even a damaged
// one is not reported (TestServeStartsOnBadLogAndRefusesMutations: one
// that is called reports it and refuses every mutation).
func TestServeVerifiesLogFromFirstCall(t *testing.T) {
	t.Parallel()
	path := tornKeyedLog(t)
	_, envMap := fakeEnv(t, "PROXMOX_SAFE_AUDIT_LOG", path, "PVE_ALLOWED_NODES", "pve1,pve2")
	p := listThenExit(t, envMap)
	if stderr := p.stderr.String(); strings.Contains(stderr, "does not verify") {
		t.Errorf("a server that was only listed verified its audit log: %s", stderr)
	}
}
