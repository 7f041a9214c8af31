package proxmoxsafe_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestConfigPendingUntilRestart: a running VM's cores change is reported
// pending; after a restart the same read shows it applied.
func TestConfigPendingUntilRestart(t *testing.T) {
	t.Parallel()
	e := newConfigEnv(t, nil)
	in := configIn("pve1", "qemu", 100, map[string]string{"cores": "6"})
	in.Wait = fastVerify()
	r, err := e.client.SetGuestConfig(t.Context(), in)
	if err != nil || !slices.Equal(r.Outcome.Pending, []string{"cores"}) {
		t.Fatalf("receipt %+v, err %v; want cores pending", r, err)
	}
	if g, _ := e.fake.Guest(100); g.CPUs != 4 {
		t.Errorf("cores applied to the running VM: %d", g.CPUs)
	}
	fakeRestart(t, e, "pve1", "qemu", 100)
	out, err := e.client.Verify(t.Context(), r, fastVerify())
	if err != nil || out.Pending != nil || out.Observed != "applied: cores=6" {
		t.Errorf("after restart: %+v, %v", out, err)
	}
}

// fakeRestart stops and starts a guest through the fake's API (the
// default token), which applies its pending config as Proxmox's start
// does.
func fakeRestart(t *testing.T, e *env, node, typ string, vmid int) {
	t.Helper()
	for _, action := range []string{"stop", "start"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
			e.fake.URL+"/api2/json/nodes/"+node+"/"+typ+"/"+strconv.Itoa(vmid)+"/status/"+action, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "PVEAPIToken=automation@pve!mcp="+canary)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := e.fake.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", action, resp.Status)
		}
		e.fake.FinishTasks()
	}
}
