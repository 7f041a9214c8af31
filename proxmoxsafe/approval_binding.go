package proxmoxsafe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// What an approval covers: exactly what the person approving is shown,
// and the cluster it is for. An approval that is used in a later call than
// the one that asked for it (a grant, an answered elicitation) stores
// [ApprovalRequest.Binding] when it asks and approves a later request only
// when that request, rebuilt by the pipeline from fresh reads, has the
// same binding; the pipeline compares it once more after any approver
// that may have taken time.

// Cluster names the Proxmox VE cluster a [Client] acts on and whom it acts
// as: the API's address (scheme and host, the host in lower case) and the
// API token id, or with a password login the user (user@realm). Two
// servers for two clusters have different Clusters, so an approval given
// for one does not approve the same call on the other. It holds no secret.
type Cluster struct {
	// Name is [Config.ClusterName], "" when the client has none.
	Name string `json:"name,omitempty"`
	// URL is the API's address, e.g. "https://pve-lab.example:8006".
	URL string `json:"url"`
	// User is the token id ("user@realm!name") or the user ("user@realm").
	User string `json:"user"`
}

// String names the cluster as approvals and audit records show it:
// "https://pve-lab.example:8006 as root@pam!mcp", with a name
// "lab: https://pve-lab.example:8006 as root@pam!mcp"; "" for the zero
// Cluster.
func (c Cluster) String() string {
	if c == (Cluster{}) {
		return ""
	}
	s := c.URL + " as " + c.User
	if c.Name != "" {
		s = c.Name + ": " + s
	}
	return s
}

// Cluster returns the cluster this client acts on and whom it acts as:
// [Config.ClusterName], [Config.ClusterURL] when set, else URL's scheme
// and host, and the token id or user.
func (c *Client) Cluster() Cluster {
	return Cluster{Name: c.clusterName, URL: c.clusterURL, User: c.tokenID}
}

// ClusterNamePattern is the form of [Config.ClusterName]: a lower-case
// DNS label of at most 32 characters, so a name is typed one way only and
// never needs quoting in a phrase, a file name or a log line.
const ClusterNamePattern = `^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`

// ValidClusterName reports whether name has the form of
// [ClusterNamePattern].
func ValidClusterName(name string) bool {
	if len(name) == 0 || len(name) > 32 || name[0] == '-' || name[len(name)-1] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-') {
			return false
		}
	}
	return true
}

// onCluster is phrase as this client requires it: with a cluster name,
// followed by " cluster=<name>" (Config.ClusterName says why).
func (c *Client) onCluster(phrase string) string {
	if c.clusterName == "" {
		return phrase
	}
	return phrase + " cluster=" + c.clusterName
}

// clusterAddress is the address the client names its cluster by:
// Config.ClusterURL (checked as URL is), else base's scheme and host,
// the host in lower case.
func clusterAddress(cfg Config, base *url.URL) (string, error) {
	if cfg.ClusterURL != "" {
		u, err := parseBaseURL(cfg.ClusterURL, true)
		if err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				return "", configError("ClusterURL", "Cluster%s", ce.Problem)
			}
			return "", err
		}
		base = u
	}
	return base.Scheme + "://" + strings.ToLower(base.Host), nil
}

// bindingLabel versions the encoding of [ApprovalRequest.Binding]: a
// binding written by a version that bound less never equals one of this
// encoding, so such an approval is asked for again rather than used.
const bindingLabel = "proxmox-safe-mcp/approval/v2"

// Binding returns the digest (64 lowercase hex digits, SHA-256) of what
// approving r covers: the cluster, the action, the target, the parameters,
// the arguments digest, the guest state shown ([GuestState.Fingerprint]:
// status, QEMU status, name, lock, template, HA state), the effect, the
// risk line, and the one request the plan sends (method, path and
// parameters). Every approver that shows a person a request and uses the
// answer in a later call binds it: the pipeline rebuilds the request from
// fresh reads at every call, so a disk attached, a disk grown, another
// cluster or another state gives another binding, and the approval no
// longer applies. Phrase and Given are not covered (the phrase follows
// from action, target and parameters), nor the plan's phrase and levels.
func (r ApprovalRequest) Binding() string {
	raw, _ := json.Marshal([]any{bindingLabel, r.Cluster.String(), r.Action, r.Target.String(), paramStrings(r.Params),
		r.Arguments, r.State.Fingerprint(), r.Effect, r.Risk, r.Request()})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Request is the one request r's plan sends, as a person approving is
// shown it: "DELETE /nodes/pve1/qemu/103 destroy-unreferenced-disks=1
// purge=0" (parameters sorted by name); "" when the operation sends more
// than one request (no plan).
func (r ApprovalRequest) Request() string {
	p := r.Plan
	if p == nil {
		return ""
	}
	s := p.Method + " " + p.Path
	for _, k := range slices.Sorted(maps.Keys(p.Params)) {
		s += " " + k + "=" + p.Params[k]
	}
	return s
}

// ShownDifference says what differs between two requests an approval
// could cover, as a refusal tells it ("the effect (approved: …; now: …)"),
// or "" when their bindings are equal. It names the parts a person is
// shown; a difference in the arguments digest alone is "the arguments".
func ShownDifference(approved, now ApprovalRequest) string {
	if approved.Binding() == now.Binding() {
		return ""
	}
	var out []string
	diff := func(what, a, b string) {
		if a != b {
			out = append(out, what+" (approved: "+strconv.Quote(a)+"; now: "+strconv.Quote(b)+")")
		}
	}
	diff("the cluster", approved.Cluster.String(), now.Cluster.String())
	diff("the action", approved.Action, now.Action)
	diff("the target", approved.Target.String(), now.Target.String())
	diff("the parameters", strings.Join(paramStrings(approved.Params), " "), strings.Join(paramStrings(now.Params), " "))
	if approved.State.Fingerprint() != now.State.Fingerprint() {
		a, b := approved.State.Summary(), now.State.Summary()
		if approved.State.Name != now.State.Name {
			a, b = "name "+approved.State.Name+", "+a, "name "+now.State.Name+", "+b
		}
		out = append(out, "the guest's state (approved: "+strconv.Quote(a)+"; now: "+strconv.Quote(b)+")")
	}
	diff("the effect", approved.Effect, now.Effect)
	diff("the risk", approved.Risk, now.Risk)
	diff("the request", approved.Request(), now.Request())
	if len(out) == 0 {
		out = append(out, "the arguments")
	}
	return strings.Join(out, "; ")
}

// shownRequest completes req with what every approver shows besides the
// operation's own words: the cluster and the action's risk line. The
// pipeline calls it for every request it hands to approvers, so the
// binding of a request is the same whichever path built it.
func (c *Client) shownRequest(m *mutation, req ApprovalRequest) ApprovalRequest {
	req.Cluster = c.Cluster()
	if a, ok := m.decl.info.Action(req.Action); ok {
		req.Risk = a.Risk
	} else {
		req.Risk = ActionRisk(req.Action)
	}
	return req
}
