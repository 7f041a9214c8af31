package proxmoxsafe_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestBackupRootOnlyParamsRefused: a backup run (POST
// /nodes/{node}/vzdump) and a backup job (POST /cluster/backup; a PUT of
// one is refused whatever its parameters, TestGatewaySetSelectorsRefused)
// can carry script, a hook script the node runs as
// root at each backup phase, and tmpdir and dumpdir, host directories
// the backup writes to as root. Proxmox allows the three to root@pam
// only, so a password login as root@pam would send them through (an API
// token's user, root@pam!name, is refused by Proxmox); no dedicated tool
// sends a backup, and the gateway never sends them. Each is refused by
// the policy step, with the exact approval phrase too, before any
// request (the fake's log stays empty), with one refused audit record
// that does not quote the value. The same request without the parameter
// passes the policy step (it is refused only for its missing approval),
// so the parameter is what is refused.
func TestBackupRootOnlyParamsRefused(t *testing.T) {
	t.Parallel()
	requests := []struct{ method, path string }{
		{"POST", "/nodes/pve1/vzdump"},
		{"POST", "/cluster/backup"},
	}
	const value = "/root/CANARY-hook.sh"
	for _, req := range requests {
		for _, param := range []string{"script", "tmpdir", "dumpdir"} {
			t.Run(req.method+" "+req.path+" "+param, func(t *testing.T) {
				t.Parallel()
				e := gatewayEnv(t, nil)
				params := map[string]string{"vmid": "101", "storage": "local", param: value}
				in := proxmoxsafe.APIRequestInput{Method: req.method, Path: req.path, Params: params,
					Approval: exactGatewayPhrase(req.method, req.path, params)}
				_, err := e.client.APIRequest(t.Context(), in)
				assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrNotAllowed, "parameter "+param+" is never sent", true)
				if msg := err.Error(); strings.Contains(msg, "CANARY") {
					t.Errorf("the refusal quotes the value: %q", msg)
				}
				if strings.Contains(e.audit.String(), "CANARY") {
					t.Errorf("the audit record quotes the value: %s", e.audit.String())
				}
			})
		}
		t.Run(req.method+" "+req.path+" without them", func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			_, err := e.client.APIRequest(t.Context(), proxmoxsafe.APIRequestInput{Method: req.method, Path: req.path,
				Params: map[string]string{"vmid": "101", "storage": "local"}})
			// Only the approval missing, or (a route a dedicated backup
			// operation covers) refused as that operation's: not for a
			// parameter.
			if !errors.Is(err, proxmoxsafe.ErrApprovalRequired) && !strings.Contains(fmt.Sprint(err), "dedicated operation") || strings.Contains(fmt.Sprint(err), "is never sent") {
				t.Fatalf("err = %v, want only the approval missing", err)
			}
			if got := e.fake.MutatingRequests(); len(got) != 0 {
				t.Errorf("mutating requests = %v, want none", reqLines(got))
			}
		})
	}
}

// exactGatewayPhrase is the phrase that approves a gateway write of these
// parameters, computed as anyone can (the first 16 hex digits of the
// SHA-256 of their form encoding): a refusal given with it is the policy
// step's, not a missing approval.
func exactGatewayPhrase(method, path string, params map[string]string) string {
	return "APPROVE " + method + " " + path + " params=" + gatewayParamDigest(params)
}

// gatewayParamDigest is the gateway's parameter digest as anyone
// recomputes it: the first 16 hex digits of the SHA-256 of the
// parameters' url.Values encoding.
func gatewayParamDigest(params map[string]string) string {
	vals := url.Values{}
	for k, v := range params {
		vals.Set(k, v)
	}
	sum := sha256.Sum256([]byte(vals.Encode()))
	return hex.EncodeToString(sum[:8])
}
