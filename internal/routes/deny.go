package routes

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// This file is the design rule in code: no class ever exposes guest exec
// or agent exec, host power, storage mutation, or ACL, user and token
// changes, and the gateway's deny list enforces the same (docs/SECURITY.md,
// "The gateway's deny list"). denyTable is the one table. The library
// checks it before anything is sent (APIGet, APIRequest), and the
// transport guard checks it again on the escaped URL of every request that
// leaves the client ([Allowlist.Check]), so a bug in the library's path
// handling still cannot send a denied request. docs/SECURITY.md lists the
// same table for operators.

// DenyScope says which methods a deny rule covers.
type DenyScope int

const (
	// DenyWrites covers POST, PUT and DELETE.
	DenyWrites DenyScope = iota + 1
	// DenyAll covers every method, GET included: reads that hand out a
	// secret, a console or code execution.
	DenyAll
)

// DenyRule is one row of the deny table. Pattern is a path relative to
// /api2/json whose segments are literals, "*" (any one segment), "a|b"
// (either literal) or a final "**" (zero or more segments). Matching
// ignores case: over-refusing is the safe mistake.
type DenyRule struct {
	Scope   DenyScope
	Pattern string
	// Why is the reason shown in the refusal and the documentation.
	Why string
}

// guestTypes matches the guest type segment.
const guestTypes = "qemu|lxc"

// denyTable is the deny table (see the file comment).
var denyTable = []DenyRule{
	// ACL, user, token, TFA, password, realm and ticket changes.
	{DenyWrites, "/access/**", "changes users, groups, roles, ACLs, API tokens, TFA, passwords, realms or logs in (ticket)"},
	{DenyAll, "/access/ticket", "the ticket login hands out a session ticket and CSRF token"},
	{DenyWrites, "/cluster/jobs/realm-sync/**", "schedules a realm sync, which creates, changes and removes users and groups (and their ACLs, remove-vanished=acl)"},
	// Node shell, consoles and anything that runs commands on a host.
	{DenyAll, "/nodes/*/termproxy|vncshell|spiceshell|vncwebsocket", "opens a shell on the node"},
	{DenyAll, "/nodes/*/execute", "runs a batch of API calls as the node"},
	{DenyAll, "/nodes/*/" + guestTypes + "/*/vncproxy|termproxy|spiceproxy|vncwebsocket|mtunnel|mtunnelwebsocket", "opens a guest console or migration tunnel (its answer carries a ticket)"},
	{DenyAll, "/nodes/*/qemu/*/monitor", "runs QEMU monitor commands on the node"},
	{DenyWrites, "/nodes/*/qemu/*/sendkey", "types keys into the guest console"},
	{DenyWrites, "/nodes/*/" + guestTypes + "/*/remote_migrate", "migrates to another cluster with an API token passed in the request"},
	// Guest agent code execution and file access.
	{DenyAll, "/nodes/*/qemu/*/agent/exec|exec-status|file-read|file-write|set-user-password", "runs commands, reads or writes files or sets passwords inside the guest"},
	{DenyWrites, "/nodes/*/qemu/*/agent", "sends any guest agent command by name"},
	{DenyAll, "/nodes/*/qemu/*/cloudinit/dump", "returns the cloud-init user data, which holds the password hash"},
	// Raw config files as one text, which no redaction by key reaches.
	{DenyAll, "/nodes/*/vzdump/extractconfig", "returns a backed-up guest config as raw text (raw QEMU args, hook script, the cloud-init password hash)"},
	{DenyAll, "/nodes/*/report", "returns every guest config file, corosync.conf and the firewall rules as raw text"},
	// Node power and whole-node guest actions.
	{DenyWrites, "/nodes/*/status", "reboots or shuts down the node"},
	{DenyWrites, "/nodes/*/startall|stopall|suspendall|migrateall|wakeonlan", "changes the power state of a node or of all its guests"},
	{DenyWrites, "/cluster/bulk-action/**", "acts on many guests at once (all of them without a list), protected ones included"},
	// Guest routes equivalent to what the config class never does.
	{DenyWrites, "/nodes/*/" + guestTypes + "/*/unlink", "deletes unused disks and their volumes (the config class never touches unused*; volumes are never deleted through the gateway)"},
	{DenyWrites, "/nodes/*/" + guestTypes + "/*/move_disk|move_volume", "moves a disk to another storage or onto another guest, deleting the source volume with delete=1 (storage volumes are never changed through the gateway)"},
	{DenyWrites, "/nodes/*/" + guestTypes + "/*/template", "converts the guest to a template, which cannot be undone (the config class's never-key template)"},
	// Host configuration.
	{DenyWrites, "/nodes/*/services/**", "starts, stops or restarts host services"},
	{DenyWrites, "/nodes/*/apt/**", "changes the host's package repositories or updates"},
	{DenyWrites, "/nodes/*/network/**", "changes the host's network (applying it can cut the node off)"},
	{DenyWrites, "/nodes/*/certificates/**", "uploads or orders the node's TLS certificate and key"},
	{DenyWrites, "/nodes/*/dns|hosts|time|config|subscription", "changes the host's DNS, /etc/hosts, time zone, node options or subscription"},
	{DenyWrites, "/nodes/*/firewall/**", "changes the host firewall"},
	{DenyWrites, "/cluster/firewall/**", "changes the cluster firewall"},
	{DenyWrites, "/cluster/sdn", "applies the pending SDN configuration to the network of every node (as /nodes/*/network/** does on one node: applying it can cut nodes off)"},
	{DenyAll, "/nodes/*/syslog|journal", "host logs can carry command lines and secrets"},
	// Cluster membership and cluster-wide secrets.
	{DenyWrites, "/cluster/config/**", "changes cluster membership or corosync"},
	{DenyWrites, "/cluster/acme/**", "changes ACME accounts or DNS plugin credentials"},
	{DenyAll, "/cluster/acme/plugins/**", "DNS plugin configurations hold API credentials"},
	{DenyWrites, "/cluster/notifications/**", "notification targets send cluster data to arbitrary endpoints"},
	{DenyAll, "/cluster/notifications/endpoints/**", "endpoint configurations can carry credentials (webhook headers and URLs with tokens, SMTP and Gotify servers)"},
	{DenyWrites, "/cluster/options", "changes cluster-wide options, among them the WebAuthn and U2F settings second factors depend on and the migration network"},
	{DenyWrites, "/cluster/metrics/**", "metric servers send cluster data to arbitrary endpoints"},
	{DenyWrites, "/cluster/mapping/**", "maps host PCI/USB devices and directories into guests"},
	// Storage definitions and volumes.
	{DenyWrites, "/storage/**", "changes storage definitions (with their credentials)"},
	{DenyWrites, "/nodes/*/storage/**", "allocates, deletes, uploads, downloads or pulls storage volumes"},
	{DenyAll, "/nodes/*/storage/*/file-restore/**", "reads files out of backups"},
	{DenyWrites, "/nodes/*/disks/**", "wipes or formats host disks"},
	{DenyWrites, "/nodes/*/ceph/**", "changes Ceph"},
	{DenyWrites, "/cluster/ceph/**", "changes Ceph"},
	{DenyWrites, "/nodes/*/aplinfo", "downloads an appliance template to storage"},
	// The node fetching what a caller names (server-side request forgery).
	{DenyAll, "/nodes/*/scan/**", "makes the node connect to a server the caller names, with credentials"},
	{DenyAll, "/nodes/*/query-url-metadata|query-oci-repo-tags", "makes the node fetch a URL the caller names"},
}

// DeniedBy returns (a copy of) the rule that denies method on the path's
// segments, or nil. Segments are unescaped.
func DeniedBy(method string, segs []string) *DenyRule {
	write := method != http.MethodGet && method != http.MethodHead
	compiled := compiledDeny()
	for i := range denyTable {
		if denyTable[i].Scope == DenyWrites && !write {
			continue
		}
		if denyMatch(compiled[i], segs) {
			r := denyTable[i]
			return &r
		}
	}
	return nil
}

// compiledDeny is each rule's pattern split into segments, each segment
// into its alternatives: built on first use, since the guard checks the
// table on every request (the library's BenchmarkGuardCheck).
var compiledDeny = sync.OnceValue(func() [][][]string {
	out := make([][][]string, len(denyTable))
	for i, r := range denyTable {
		for _, seg := range strings.Split(r.Pattern[1:], "/") {
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

// DenyRules returns a copy of the deny table, in table order.
func DenyRules() []DenyRule { return slices.Clone(denyTable) }

// DenyLines returns the deny table as "METHODS pattern: reason" lines, in
// table order, for documentation and doctor output.
func DenyLines() []string {
	out := make([]string, len(denyTable))
	for i, r := range denyTable {
		m := "POST/PUT/DELETE"
		if r.Scope == DenyAll {
			m = "ALL"
		}
		out[i] = m + " " + r.Pattern + ": " + r.Why
	}
	return out
}
