package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestGatewaySetSelectorsRefused: with guest 106 protected, a backup of
// every guest of the node in stop mode was planned and sent (mode=stop
// shuts every selected guest down), and so were a pool's guests, all but
// an excluded one, and a scheduled job of every guest. A write that
// selects guests by a set, or changes what a job, HA group or rule acts
// on without naming the guests, is refused with the exact phrase, before
// any request (not even a protection read), with one refused record.
func TestGatewaySetSelectorsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method, path string
		params             map[string]string
		mention            string
	}{
		{"every guest of the node in stop mode", "POST", "/nodes/pve1/vzdump", map[string]string{"all": "1", "mode": "stop"}, "parameter all selects every guest"},
		{"every guest, snapshot mode", "POST", "/nodes/pve1/vzdump", map[string]string{"all": "true", "mode": "snapshot", "storage": "local"}, "parameter all"},
		{"a pool's guests", "POST", "/nodes/pve1/vzdump", map[string]string{"pool": "other", "mode": "stop"}, "parameter pool selects every guest of the pool"},
		{"all but one", "POST", "/nodes/pve1/vzdump", map[string]string{"all": "1", "exclude": "200", "mode": "stop"}, "parameter all"},
		{"exclude alone implies all", "POST", "/nodes/pve1/vzdump", map[string]string{"exclude": "200"}, "parameter exclude selects every guest but those listed"},
		{"every running backup of the node", "POST", "/nodes/pve1/vzdump", map[string]string{"stop": "1"}, "stops every backup running on the node"},
		{"a scheduled job of every guest", "POST", "/cluster/backup", map[string]string{"all": "1", "mode": "stop", "schedule": "daily"}, "parameter all"},
		{"a scheduled job of a pool", "POST", "/cluster/backup", map[string]string{"pool": "other", "schedule": "daily"}, "parameter pool"},
		{"a job changed", "PUT", "/cluster/backup/backup-5f0e1d2c-77aa", map[string]string{"mode": "stop"}, "changes a backup job"},
		{"an HA group changed", "PUT", "/cluster/ha/groups/web", map[string]string{"nodes": "pve2"}, "changes an HA group"},
		{"an HA group removed", "DELETE", "/cluster/ha/groups/web", nil, "removes an HA group"},
		{"an HA rule changed", "PUT", "/cluster/ha/rules/r1", map[string]string{"nodes": "pve2"}, "changes an HA rule"},
		{"an HA rule removed", "DELETE", "/cluster/ha/rules/r1", nil, "removes an HA rule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			in := proxmoxsafe.APIRequestInput{Method: tc.method, Path: tc.path, Params: tc.params,
				Approval: exactGatewayPhrase(tc.method, tc.path, tc.params)}
			_, err := e.client.APIRequest(t.Context(), in)
			assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrNotAllowed, tc.mention, true)
			if !strings.Contains(err.Error(), "must name each guest") {
				t.Errorf("err = %v, want it to say guests must be named", err)
			}
		})
	}
}

// TestGatewayNamedGuestsStillChecked: guests named one by one are no
// set: a protected one among them is refused after the protection read,
// and a list without one is not refused as a set (all=0 is no set
// either); a backup job in stop mode is a power action of each guest,
// refused as a dedicated operation's.
func TestGatewayNamedGuestsStillChecked(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	ctx := t.Context()
	params := map[string]string{"vmid": "101,106", "schedule": "daily"}
	_, err := e.client.APIRequest(ctx, proxmoxsafe.APIRequestInput{Method: "POST", Path: "/cluster/backup", Params: params,
		Approval: exactGatewayPhrase("POST", "/cluster/backup", params)})
	if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "guest 106 is protected") && !strings.Contains(err.Error(), "dedicated operation") {
		t.Errorf("a list with a protected guest: err = %v", err)
	}
	for _, params := range []map[string]string{{"vmid": "101", "mode": "snapshot"}, {"vmid": "101", "all": "0"}} {
		for _, path := range []string{"/nodes/pve1/vzdump", "/cluster/backup"} {
			_, err = e.client.APIRequest(ctx, proxmoxsafe.APIRequestInput{Method: "POST", Path: path, Params: params})
			if err == nil || strings.Contains(err.Error(), "must name each guest") {
				t.Errorf("%s %v: err = %v, want no set refusal", path, params, err)
			}
		}
	}
	params = map[string]string{"vmid": "101", "mode": "stop", "schedule": "daily"}
	_, err = e.client.APIRequest(ctx, proxmoxsafe.APIRequestInput{Method: "POST", Path: "/cluster/backup", Params: params,
		Approval: exactGatewayPhrase("POST", "/cluster/backup", params)})
	if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "dedicated operation") {
		t.Errorf("stop mode: err = %v, want refused as a dedicated operation's", err)
	}
	if got := e.fake.MutatingRequests(); len(got) != 0 {
		t.Errorf("mutating requests = %v, want none", reqLines(got))
	}
}
