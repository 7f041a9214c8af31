package proxmoxsafe

import (
	"net/http"
	"strings"
	"sync"
)

// This file is the design rule in code: no class ever exposes guest exec
// or agent exec, host power, storage mutation, or ACL, user and token
// changes, and the gateway's deny list enforces the same (docs/SECURITY.md,
// "The gateway's deny list"). gatewayDeny is the one table. The library checks it before anything is sent
// (APIGet, APIRequest), and the transport guard checks it again on the
// escaped URL of every request that leaves the client (transport.go), so a
// bug in the library's path handling still cannot send a denied request.
// docs/SECURITY.md lists the same table for operators.

// denyScope says which methods a deny rule covers.
type denyScope int

const (
	// denyWrites covers POST, PUT and DELETE.
	denyWrites denyScope = iota + 1
	// denyAll covers every method, GET included: reads that hand out a
	// secret, a console or code execution.
	denyAll
)

// denyRule is one row of the deny table. pattern is a path relative to
// /api2/json whose segments are literals, "*" (any one segment), "a|b"
// (either literal) or a final "**" (zero or more segments). Matching
// ignores case: over-refusing is the safe mistake.
type denyRule struct {
	scope   denyScope
	pattern string
	why     string
}

// guestTypes matches the guest type segment.
const guestTypes = "qemu|lxc"

// gatewayDeny is the deny table (see the file comment).
var gatewayDeny = []denyRule{
	// ACL, user, token, TFA, password, realm and ticket changes.
	{denyWrites, "/access/**", "changes users, groups, roles, ACLs, API tokens, TFA, passwords, realms or logs in (ticket)"},
	{denyAll, "/access/ticket", "the ticket login hands out a session ticket and CSRF token"},
	{denyWrites, "/cluster/jobs/realm-sync/**", "schedules a realm sync, which creates, changes and removes users and groups (and their ACLs, remove-vanished=acl)"},
	// Node shell, consoles and anything that runs commands on a host.
	{denyAll, "/nodes/*/termproxy|vncshell|spiceshell|vncwebsocket", "opens a shell on the node"},
	{denyAll, "/nodes/*/execute", "runs a batch of API calls as the node"},
	{denyAll, "/nodes/*/" + guestTypes + "/*/vncproxy|termproxy|spiceproxy|vncwebsocket|mtunnel|mtunnelwebsocket", "opens a guest console or migration tunnel (its answer carries a ticket)"},
	{denyAll, "/nodes/*/qemu/*/monitor", "runs QEMU monitor commands on the node"},
	{denyWrites, "/nodes/*/qemu/*/sendkey", "types keys into the guest console"},
	{denyWrites, "/nodes/*/" + guestTypes + "/*/remote_migrate", "migrates to another cluster with an API token passed in the request"},
	// Guest agent code execution and file access.
	{denyAll, "/nodes/*/qemu/*/agent/exec|exec-status|file-read|file-write|set-user-password", "runs commands, reads or writes files or sets passwords inside the guest"},
	{denyWrites, "/nodes/*/qemu/*/agent", "sends any guest agent command by name"},
	{denyAll, "/nodes/*/qemu/*/cloudinit/dump", "returns the cloud-init user data, which holds the password hash"},
	// Raw config files as one text, which no redaction by key reaches.
	{denyAll, "/nodes/*/vzdump/extractconfig", "returns a backed-up guest config as raw text (raw QEMU args, hook script, the cloud-init password hash)"},
	{denyAll, "/nodes/*/report", "returns every guest config file, corosync.conf and the firewall rules as raw text"},
	// Node power and whole-node guest actions.
	{denyWrites, "/nodes/*/status", "reboots or shuts down the node"},
	{denyWrites, "/nodes/*/startall|stopall|suspendall|migrateall|wakeonlan", "changes the power state of a node or of all its guests"},
	{denyWrites, "/cluster/bulk-action/**", "acts on many guests at once (all of them without a list), protected ones included"},
	// Host configuration.
	{denyWrites, "/nodes/*/services/**", "starts, stops or restarts host services"},
	{denyWrites, "/nodes/*/apt/**", "changes the host's package repositories or updates"},
	{denyWrites, "/nodes/*/network/**", "changes the host's network (applying it can cut the node off)"},
	{denyWrites, "/nodes/*/certificates/**", "uploads or orders the node's TLS certificate and key"},
	{denyWrites, "/nodes/*/dns|hosts|time|config|subscription", "changes the host's DNS, /etc/hosts, time zone, node options or subscription"},
	{denyWrites, "/nodes/*/firewall/**", "changes the host firewall"},
	{denyWrites, "/cluster/firewall/**", "changes the cluster firewall"},
	{denyAll, "/nodes/*/syslog|journal", "host logs can carry command lines and secrets"},
	// Cluster membership and cluster-wide secrets.
	{denyWrites, "/cluster/config/**", "changes cluster membership or corosync"},
	{denyWrites, "/cluster/acme/**", "changes ACME accounts or DNS plugin credentials"},
	{denyAll, "/cluster/acme/plugins/**", "DNS plugin configurations hold API credentials"},
	{denyWrites, "/cluster/notifications/**", "notification targets send cluster data to arbitrary endpoints"},
	{denyAll, "/cluster/notifications/endpoints/**", "endpoint configurations can carry credentials (webhook headers and URLs with tokens, SMTP and Gotify servers)"},
	{denyWrites, "/cluster/options", "changes cluster-wide options, among them the WebAuthn and U2F settings second factors depend on and the migration network"},
	{denyWrites, "/cluster/metrics/**", "metric servers send cluster data to arbitrary endpoints"},
	{denyWrites, "/cluster/mapping/**", "maps host PCI/USB devices and directories into guests"},
	// Storage definitions and volumes.
	{denyWrites, "/storage/**", "changes storage definitions (with their credentials)"},
	{denyWrites, "/nodes/*/storage/**", "allocates, deletes, uploads, downloads or pulls storage volumes"},
	{denyAll, "/nodes/*/storage/*/file-restore/**", "reads files out of backups"},
	{denyWrites, "/nodes/*/disks/**", "wipes or formats host disks"},
	{denyWrites, "/nodes/*/ceph/**", "changes Ceph"},
	{denyWrites, "/cluster/ceph/**", "changes Ceph"},
	{denyWrites, "/nodes/*/aplinfo", "downloads an appliance template to storage"},
	// The node fetching what a caller names (server-side request forgery).
	{denyAll, "/nodes/*/scan/**", "makes the node connect to a server the caller names, with credentials"},
	{denyAll, "/nodes/*/query-url-metadata|query-oci-repo-tags", "makes the node fetch a URL the caller names"},
}

// deniedBy returns the rule that denies method on the path's segments, or
// nil. Segments are unescaped.
func deniedBy(method string, segs []string) *denyRule {
	write := method != http.MethodGet && method != http.MethodHead
	compiled := compiledDeny()
	for i := range gatewayDeny {
		r := &gatewayDeny[i]
		if r.scope == denyWrites && !write {
			continue
		}
		if denyMatch(compiled[i], segs) {
			return r
		}
	}
	return nil
}

// compiledDeny is each rule's pattern split into segments, each segment
// into its alternatives: built on first use, since the guard checks the
// table on every request (BenchmarkGuardCheck).
var compiledDeny = sync.OnceValue(func() [][][]string {
	out := make([][][]string, len(gatewayDeny))
	for i, r := range gatewayDeny {
		for _, seg := range strings.Split(r.pattern[1:], "/") {
			out[i] = append(out[i], strings.Split(seg, "|"))
		}
	}
	return out
})

func denyMatch(pat [][]string, segs []string) bool {
	for i, alts := range pat {
		if alts[0] == "**" {
			return true
		}
		if i >= len(segs) {
			return false
		}
		if alts[0] == "*" {
			continue
		}
		if !anyFold(alts, segs[i]) {
			return false
		}
	}
	return len(pat) == len(segs)
}

func anyFold(alts []string, seg string) bool {
	for _, a := range alts {
		if strings.EqualFold(a, seg) {
			return true
		}
	}
	return false
}

// deniedRefusal is the refusal for a denied request.
func deniedRefusal(method string, path string, r *denyRule) *RefusalError {
	return refuse(ErrNotAllowed, "%s %s is on the gateway's deny list (%s: %s); no class or approval can allow it, and no request was sent",
		method, truncate(path, 120), r.pattern, r.why)
}

// DeniedGatewayRoutes returns the gateway's deny list as "METHODS pattern:
// reason" lines, in table order, for documentation and doctor output.
func DeniedGatewayRoutes() []string {
	out := make([]string, len(gatewayDeny))
	for i, r := range gatewayDeny {
		m := "POST/PUT/DELETE"
		if r.scope == denyAll {
			m = "ALL"
		}
		out[i] = m + " " + r.pattern + ": " + r.why
	}
	return out
}
