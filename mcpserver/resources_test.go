package mcpserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readResource reads uri and returns its one text content.
func readResource(t *testing.T, f *fixture, uri string) (string, error) {
	t.Helper()
	res, err := f.cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != "text/plain" {
		t.Fatalf("%s: contents %s", uri, mustJSON(t, res))
	}
	return res.Contents[0].Text, nil
}

// TestResources: the cluster summary and a guest's status and config are
// resources whose text is exactly what the read tool of the same data
// answers, read through the same library call.
func TestResources(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{})
	list, err := f.cs.ListResources(t.Context(), nil)
	if err != nil || !sameURIs(list.Resources, ResourceClusterSummary, ResourceMetricsChartApp) {
		t.Fatalf("resources/list: %v %s", err, mustJSON(t, list))
	}
	templates, err := f.cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != ResourceGuestTemplate {
		t.Fatalf("resources/templates/list: %v %s", err, mustJSON(t, templates))
	}
	for _, tc := range []struct {
		uri, tool string
		args      map[string]any
	}{
		{ResourceClusterSummary, ToolClusterStatus, map[string]any{}},
		{"proxmox://guests/pve1/qemu/100/status", ToolGuestStatus, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}},
		{"proxmox://guests/pve1/qemu/100/config", ToolGuestConfig, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}},
	} {
		got, err := readResource(t, f, tc.uri)
		if err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		if want := text(t, f.call(t, t.Context(), tc.tool, tc.args)); got != want {
			t.Errorf("%s reads\n%s\nwant what %s answers\n%s", tc.uri, got, tc.tool, want)
		}
	}
}

// TestResourceRefusals: a guest URI the library's rules refuse (a node
// name Proxmox does not allow, an unknown type, a vmid that is not one)
// costs no request to Proxmox; a node off the allowlist is refused by the
// policy with none either; a guest Proxmox lacks is "resource not found".
func TestResourceRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{})
	for _, uri := range []string{
		"proxmox://guests/pve_1!/qemu/100/status",
		"proxmox://guests/pve1/xen/100/status",
		"proxmox://guests/pve1/qemu/abc/status",
		"proxmox://guests/pve1/qemu/1/status",
		"proxmox://guests/pve9/qemu/100/status",
	} {
		if _, err := readResource(t, f, uri); err == nil {
			t.Errorf("%s was read", uri)
		}
	}
	if got := f.fake.Requests(); len(got) != 0 {
		t.Errorf("requests to Proxmox after refused URIs: %v", requestLines(got))
	}
	for _, uri := range []string{"proxmox://guests/pve1/qemu/999/status", "proxmox://guests/pve1/qemu/100/secrets", "proxmox://guests/pve1/qemu"} {
		_, err := readResource(t, f, uri)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeResourceNotFound {
			t.Errorf("%s: %v, want resource not found", uri, err)
		}
	}
}

// sameURIs reports whether resources are exactly uris, in order.
func sameURIs(resources []*mcp.Resource, uris ...string) bool {
	if len(resources) != len(uris) {
		return false
	}
	for i, r := range resources {
		if r.URI != uris[i] {
			return false
		}
	}
	return true
}

// TestResourcesFollowTheTools: a Selection that hides a read hides its
// resource (the summary, metrics_chart's view) or its view of the
// template (the config).
func TestResourcesFollowTheTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{opts: Options{Selection: Selection{ExcludeTools: []string{ToolClusterStatus, ToolGuestConfig}}}})
	list, err := f.cs.ListResources(t.Context(), nil)
	if err != nil || !sameURIs(list.Resources, ResourceMetricsChartApp) {
		t.Errorf("resources/list with cluster_status hidden: %v %s", err, mustJSON(t, list))
	}
	templates, err := f.cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || strings.Contains(templates.ResourceTemplates[0].Description, "config") {
		t.Fatalf("templates with guest_config hidden: %v %s", err, mustJSON(t, templates))
	}
	if _, err := readResource(t, f, "proxmox://guests/pve1/qemu/100/config"); err == nil {
		t.Error("the config view was read with guest_config hidden")
	}
	if _, err := readResource(t, f, "proxmox://guests/pve1/qemu/100/status"); err != nil {
		t.Errorf("status view: %v", err)
	}
}
