package mcpserver

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFleetResourcesAndPrompts: on a fleet each cluster's resources carry
// its name in the URI and are read on that cluster only, with the text its
// tool answers there; a prompt takes a required cluster, named in its text,
// and an unknown one is refused; nothing is read for a prompt.
func TestFleetResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	lab, prod := newFleetMember(t, "lab", defaultPolicy()), newFleetMember(t, "prod", defaultPolicy())
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, prod), nil), "")
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil || !sameURIs(list.Resources, "proxmox://clusters/lab/summary", "proxmox://clusters/prod/summary", ResourceMetricsChartApp) {
		t.Fatalf("resources/list: %v %s", err, mustJSON(t, list))
	}
	templates, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(templates.ResourceTemplates) != 2 {
		t.Fatalf("templates: %v %s", err, mustJSON(t, templates))
	}
	uri := "proxmox://clusters/prod/guests/pve1/qemu/100/status"
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("%s: %v %s", uri, err, mustJSON(t, res))
	}
	call, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestStatus, Arguments: map[string]any{"cluster": "prod", "node": "pve1", "type": "qemu", "vmid": 100}})
	if err != nil {
		t.Fatal(err)
	}
	// The tool's result on a fleet names its cluster in its data; the
	// resource's URI names it, and the rest is the same text.
	if got, want := res.Contents[0].Text, strings.Replace(text(t, call), "\ncluster: prod\n", "\n", 1); got != want {
		t.Errorf("%s reads\n%s\nwant the tail of what guest_status answers on prod\n%s", uri, got, want)
	}
	if n := len(lab.fake.Requests()); n != 0 {
		t.Errorf("reading prod's resource sent %d requests to lab", n)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "proxmox://clusters/test/guests/pve1/qemu/100/status"}); err == nil {
		t.Error("a resource of an unknown cluster was read")
	}

	lab.fake.ResetRequests()
	prod.fake.ResetRequests()
	p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: PromptNodeReboot, Arguments: map[string]string{"cluster": "lab", "node": "pve1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(got, "reboot node pve1 on cluster lab now?") || !strings.Contains(got, `with cluster "lab"`) {
		t.Errorf("prompt on a fleet:\n%s", got)
	}
	for _, args := range []map[string]string{{"node": "pve1"}, {"cluster": "test", "node": "pve1"}, {"cluster": "lab\nprod", "node": "pve1"}} {
		if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: PromptNodeReboot, Arguments: args}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if n := len(lab.fake.Requests()) + len(prod.fake.Requests()); n != 0 {
		t.Errorf("prompts sent %d requests", n)
	}
}
