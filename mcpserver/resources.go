package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// The resources a client can attach rather than call: the cluster's
// summary, and a guest's status and configuration through one template.
// Each is the very text the read tool of the same data answers (its
// summary and its data in the compact text form), so it is bounded,
// sanitized and redacted as that tool is, and read through the same
// library call: the node allowlist and every other policy rule apply.
const (
	// ResourceClusterSummary is the cluster_status answer.
	ResourceClusterSummary = "proxmox://cluster/summary"
	// ResourceGuestTemplate names one guest's status or configuration:
	// proxmox://guests/pve1/qemu/100/status, …/config.
	ResourceGuestTemplate = "proxmox://guests/{node}/{type}/{vmid}/{view}"
)

// resourceMIME is the type of every resource's one text content.
const resourceMIME = "text/plain"

// addResources registers the resources whose underlying read tool is
// served (served: the names of the tools addTools registered), so a policy,
// read-only mode or a Selection that hides a read hides its resource too.
func addResources(server *mcp.Server, a *adapter, served []string) {
	addResourcesAt(server, a, served, "")
}

// addResourcesAt is addResources for the cluster named cluster of a fleet
// ("" for the one client of a server): a fleet's resources carry their
// cluster in the URI, proxmox://clusters/lab/summary and
// proxmox://clusters/lab/guests/{node}/{type}/{vmid}/{view}, so a read
// names its cluster exactly as a tool call does.
func addResourcesAt(server *mcp.Server, a *adapter, served []string, cluster string) {
	prefix, name, of := "proxmox://", "", ""
	if cluster != "" {
		prefix, name, of = "proxmox://clusters/"+cluster+"/", cluster+"-", " of cluster "+cluster
	}
	summary := prefix + "cluster/summary"
	if cluster != "" {
		summary = prefix + "summary"
	}
	if slices.Contains(served, ToolClusterStatus) {
		server.AddResource(&mcp.Resource{
			URI: summary, Name: name + "cluster-summary", Title: "Cluster summary" + of, MIMEType: resourceMIME,
			Description: "Quorum, nodes with their load, and guest counts: what cluster_status answers.",
		}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			text, out, err := a.clusterStatus(ctx, noArgs{})
			return resourceResult(req.Params.URI, text, out, err)
		})
	}
	var views, tools []string
	for _, v := range []struct{ tool, view string }{{ToolGuestStatus, "status"}, {ToolGuestConfig, "config"}} {
		if slices.Contains(served, v.tool) {
			views, tools = append(views, v.view), append(tools, v.tool)
		}
	}
	if len(views) == 0 {
		return
	}
	server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: prefix + "guests/{node}/{type}/{vmid}/{view}", Name: name + "guest", Title: "A guest's status or configuration" + of, MIMEType: resourceMIME,
		Description: "view is " + strings.Join(views, " or ") + ": what " + strings.Join(tools, " or ") + " answers for node, type (qemu or lxc) and vmid.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		ref, view, err := parseGuestURI(uri, prefix+"guests/")
		if err != nil {
			return nil, err
		}
		if !slices.Contains(views, view) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		var (
			text string
			out  any
		)
		switch view {
		case "status":
			text, out, err = a.guestStatus(ctx, proxmoxsafe.GuestStatusInput{GuestRef: ref})
		default:
			text, out, err = a.guestConfig(ctx, proxmoxsafe.GuestConfigInput{GuestRef: ref})
		}
		return resourceResult(uri, text, out, err)
	})
}

// parseGuestURI reads {prefix}{node}/{type}/{vmid}/{view}, prefix being
// proxmox://guests/ or a fleet cluster's proxmox://clusters/{name}/guests/. The
// parts are checked by the library's own rules before any request
// (proxmoxsafe.Validate), so a malformed URI costs nothing upstream.
func parseGuestURI(uri, prefix string) (proxmoxsafe.GuestRef, string, error) {
	rest, ok := strings.CutPrefix(uri, prefix)
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 4 {
		return proxmoxsafe.GuestRef{}, "", mcp.ResourceNotFoundError(uri)
	}
	vmid, err := strconv.Atoi(parts[2])
	if err != nil {
		return proxmoxsafe.GuestRef{}, "", fmt.Errorf("%w: resource %s: the vmid %q is not a number; nothing was read", proxmoxsafe.ErrInvalidInput, clean(uri, 256), clean(parts[2], 32))
	}
	ref := proxmoxsafe.GuestRef{Node: parts[0], Type: proxmoxsafe.GuestType(parts[1]), VMID: vmid}
	if err := proxmoxsafe.Validate(ref); err != nil {
		return proxmoxsafe.GuestRef{}, "", fmt.Errorf("resource %s: %w; nothing was read", clean(uri, 256), err)
	}
	return ref, parts[3], nil
}

// resourceResult is a read tool's answer as a resource's one text content.
// A guest Proxmox does not have is the resource not found (-32002); any
// other error is the read's own message.
func resourceResult(uri, summary string, out any, err error) (*mcp.ReadResourceResult, error) {
	if errors.Is(err, proxmoxsafe.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	res := structuredResult(summary, out) // served.go
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: uri, MIMEType: resourceMIME, Text: res.Content[0].(*mcp.TextContent).Text,
	}}}, nil
}
