package mcpstdio_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpstdio"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

type readCloser struct {
	io.Reader
	io.Closer
}

// sentRecorder records what the client wrote once the write has returned:
// on an io.Pipe that is once the server's reader has taken the bytes.
type sentRecorder struct {
	w    io.WriteCloser
	sent *testutil.SyncBuffer
}

func (r sentRecorder) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	r.sent.Write(p[:n])
	return n, err
}

func (r sentRecorder) Close() error { return r.w.Close() }

// TestCancelledMutationStaysAudited, end to end over stdio with the real
// server: a client cancels a guest_power call while the fake Proxmox holds
// its POST (the request is on its way and cannot be called back). The
// client gets no answer to it, a later call is answered, exactly one
// mutating request went out, and the audit log records it as approved and
// submitted with its task, as it does for a call nobody cancelled.
func TestCancelledMutationStaysAudited(t *testing.T) {
	t.Parallel()
	for _, pv := range []string{"", "2025-11-25"} {
		t.Run("protocol "+pv, func(t *testing.T) {
			t.Parallel()
			fake := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
			t.Cleanup(fake.Close)
			var audit testutil.SyncBuffer
			client, err := proxmoxsafe.New(proxmoxsafe.Config{
				URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret, Fingerprint: fake.Fingerprint(),
				Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower}},
				Audit:  auditlog.New(&audit, nil),
			})
			if err != nil {
				t.Fatal(err)
			}
			const path = "/nodes/pve2/qemu/103/status/start"
			hold := make(chan struct{})
			fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: path, Hold: hold, Times: 1})
			released := false
			release := func() {
				if !released {
					released = true
					close(hold)
				}
			}
			t.Cleanup(release)

			server := mcpserver.New(client, nil)
			toServer, fromClient := io.Pipe()
			toClient, fromServer := io.Pipe()
			var got, sent testutil.SyncBuffer
			ran := make(chan error, 1)
			go func() {
				ran <- server.Run(t.Context(), mcpstdio.NewTransport(toServer, fromServer, nil))
				fromServer.Close()
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil).
				Connect(t.Context(), &mcp.IOTransport{Reader: readCloser{io.TeeReader(toClient, &got), toClient}, Writer: sentRecorder{fromClient, &sent}}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			called := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "guest_power", Arguments: map[string]any{
					"node": "pve2", "type": "qemu", "vmid": 103, "action": "start", "approval": "APPROVE start pve2/qemu/103"}})
				called <- err
			}()
			deadline := time.Now().Add(30 * time.Second) // a bound for a hung test
			for len(fake.MutatingRequests()) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the POST never reached the fake")
				}
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
			if err := <-called; !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled call returned %v", err)
			}
			// The client sends its notifications/cancelled in the background:
			// release the POST only once the server has read it, or the
			// answer may rightly go out first (a cancellation after the
			// answer changes nothing). The server reads lines in order, so
			// the answer to a ping sent after the notification proves the
			// notification was read.
			for !strings.Contains(sent.String(), `"notifications/cancelled"`) {
				if time.Now().After(deadline) {
					t.Fatal("the client never sent notifications/cancelled")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := cs.Ping(t.Context(), nil); err != nil {
				t.Fatalf("ping after the cancellation: %v", err)
			}
			release()
			for !strings.Contains(audit.String(), `"submitted"`) {
				if time.Now().After(deadline) {
					t.Fatalf("the submission was never audited:\n%s", audit.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_guests", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("the call after the cancelled one: %+v, %v", res, err)
			}
			cs.Close()
			if err := <-ran; err != nil {
				t.Errorf("Run: %v", err)
			}

			if m := fake.MutatingRequests(); len(m) != 1 {
				t.Errorf("%d mutating requests, want 1", len(m))
			}
			var events []string
			for line := range strings.Lines(audit.String()) {
				var r proxmoxsafe.AuditRecord
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				if r.Event != proxmoxsafe.AuditAnchor { // the log's first record
					events = append(events, string(r.Event))
				}
				if r.Event == proxmoxsafe.AuditSubmitted && !strings.HasPrefix(r.UPID, "UPID:pve2:") {
					t.Errorf("submitted without its task: %+v", r)
				}
			}
			if strings.Join(events, ",") != "approved,submitted" {
				t.Errorf("audit events %q, want approved then submitted", events)
			}
			if _, err := auditlog.Verify(strings.NewReader(audit.String()), nil); err != nil {
				t.Errorf("the audit log does not verify: %v", err)
			}
			// The guest_power call (id 2) is the client's only tools/call
			// before the ping and list_guests; its answer is the one missing.
			var ids []string
			for line := range strings.Lines(got.String()) {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal([]byte(line), &m) == nil && m.Method == "" && m.ID != nil {
					ids = append(ids, string(m.ID))
				}
			}
			if want := "1,3,4"; strings.Join(ids, ",") != want {
				t.Errorf("answers to ids %q, want %s (initialize or discover, the ping, then list_guests; none to guest_power, 2)", ids, want)
			}
		})
	}
}
