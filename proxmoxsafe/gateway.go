package proxmoxsafe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/redact"
)

// OpAPIGet is the name of [Client.APIGet].
const OpAPIGet Operation = "APIGet"

// apiGetOp declares [Client.APIGet].
var apiGetOp = operation{info: OperationInfo{
	Name:   OpAPIGet,
	Class:  ClassGateway,
	Method: "GET",
	Route:  "/{path...}",
}}

// OpAPIRequest is the name of [Client.APIRequest].
const OpAPIRequest Operation = "APIRequest"

// apiRequestOp declares [Client.APIRequest].
var apiRequestOp = operation{info: OperationInfo{
	Name:  OpAPIRequest,
	Class: ClassGatewayWrite,
	Route: "/{path...}",
	Actions: []ActionInfo{
		{Name: "POST", Risk: riskGateway},
		{Name: "PUT", Risk: riskGateway},
		{Name: "DELETE", Risk: riskGateway},
	},
	ApprovalFormat: "APPROVE <method> <path> params=<digest>",
}}

// The generic API gateway: [Client.APIGet] (class gateway) and
// [Client.APIRequest] (class gateway-write), for what no dedicated
// operation covers, under the same contract: the path rules and the deny
// list (gateway_rules.go, tables in internal/routes), the node allowlist,
// protected guests for writes, approval bound to method, path and a digest
// of the parameters, audit before sending, and a bounded, sanitized,
// redacted answer (gateway_response.go).

// Bounds of gateway parameters.
const (
	// MaxGatewayParams caps the number of parameters of one request.
	MaxGatewayParams = 64
	// MaxGatewayParamLen caps one parameter value in bytes.
	MaxGatewayParamLen = 4096
)

// APIGetInput is a GET through the gateway.
type APIGetInput struct {
	// Path is the API path relative to /api2/json, each segment unescaped,
	// e.g. "/nodes/pve1/qemu/100/pending" (see the path rules in
	// docs/SECURITY.md).
	Path string `json:"path" validate:"required,min=1,max=256" jsonschema:"Under /api2/json, e.g. /cluster/options; no query string."`
	// Params are sent as the query string. nil means none.
	Params map[string]string `json:"params,omitempty" jsonschema:"The query, as strings (booleans 0/1)."`
}

// APIRequestInput is a POST, PUT or DELETE through the gateway.
type APIRequestInput struct {
	// Method is POST, PUT or DELETE.
	Method string `json:"method" validate:"required,oneof=POST PUT DELETE"`
	// Path is as in [APIGetInput].
	Path string `json:"path" validate:"required,min=1,max=256" jsonschema:"Under /api2/json, e.g. /cluster/ha/groups; no query string."`
	// Params are sent form-encoded (POST, PUT) or as the query (DELETE).
	// Their digest is part of the approval phrase. A parameter whose value
	// the gateway would redact (a password, token, key, sshkeys, …; see
	// docs/SECURITY.md) is refused: no secret is sent through the gateway.
	Params map[string]string `json:"params,omitempty" jsonschema:"By Proxmox's names, as strings (booleans 0/1)."`
	// Approval is the approval phrase, when the class's level is phrase.
	Approval string `json:"approval,omitempty" validate:"max=256" jsonschema:"The phrase the refusal gives; omit it first."`
	// Plan runs every step up to approval and returns the plan; nothing
	// is sent.
	Plan bool `json:"plan,omitempty"`
}

// APIResult is the gateway's answer: Proxmox's "data", sanitized, capped
// and with secret-bearing fields redacted.
type APIResult struct {
	// Method and Path name the request as sent (the path unescaped).
	Method string `json:"method"`
	Path   string `json:"path"`
	// Data is Proxmox's "data" member: strings sanitized and capped,
	// arrays and objects capped, secret-bearing values replaced by
	// [RedactedValue]. Null when Omitted or for a plan.
	Data any `json:"data"`
	// UPID is set when a write started a task (Data is then the UPID).
	UPID string `json:"upid,omitempty"`
	// Redacted lists where values were redacted, e.g. "data[0].password".
	Redacted []string `json:"redacted"`
	// Truncated lists where strings, arrays or objects were cut.
	Truncated []string `json:"truncated"`
	// Omitted is set when the answer was larger than
	// [MaxGatewayResultBytes] after shaping: Data is then null.
	Omitted bool `json:"omitted,omitempty"`
	// Note is a remark, e.g. that the answer was too large to return.
	Note string `json:"note,omitempty"`
	// Approver names the approval level that approved a write.
	Approver string `json:"approver,omitempty"`
	// Plan is set for Plan requests: nothing was sent.
	Plan *Plan `json:"plan,omitempty"`
}

// gatewayReq is a gateway request after the checks: method, segments,
// parameters, and the guest its path names (zero Target when none).
type gatewayReq struct {
	method string
	segs   []string
	params url.Values
	target Target
	// secrets is the one scan of the parameters for what the gateway
	// never sends (paramSecrets); nil until its first use.
	secrets *paramScan
}

// paramScan is what paramSecrets found in a request's parameters.
type paramScan struct {
	// why maps each parameter the gateway never sends to the reason.
	why map[string]string
	// refusal is the policy step's refusal, naming the first such
	// parameter by name; nil when there is none.
	refusal error
}

func (r *gatewayReq) path() string { return gatewayCanonical(r.segs) }

// APIGet sends one GET of any API path the token can read (class gateway):
// the path must pass the path rules and must not be on the deny list, a
// node in it must be on the node allowlist. Nothing is sent otherwise. The
// answer is bounded, sanitized and redacted (see [APIResult]).
func (c *Client) APIGet(ctx context.Context, in APIGetInput) (*APIResult, error) {
	const op = OpAPIGet
	start := time.Now()
	r, err := c.gatewayAdmit(ctx, in, http.MethodGet, in.Path, in.Params, ClassGateway)
	if err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	attrs := []slog.Attr{slog.String("method", r.method), slog.String("path", r.path())}
	var raw json.RawMessage
	if err := c.get(ctx, pve.Path(r.segs...), r.params, &raw); err != nil {
		return nil, c.logged(ctx, op, start, r.redactEcho(err), attrs...)
	}
	res := shapeAnswer(r, raw)
	c.logged(ctx, op, start, nil, attrs...)
	return res, nil
}

// APIRequest sends one POST, PUT or DELETE of an API path (class
// gateway-write), through the mutation pipeline: validate (path rules,
// parameters) → policy (class, deny list, node allowlist, protected guests
// and pools, forbidden parameters) → approval bound to the method, the
// path and a digest of the parameters (default levels elicit, then grant:
// see [DefaultApprovals]) → audit record, fail closed → the one request.
// Every attempt is audited, refusals included.
func (c *Client) APIRequest(ctx context.Context, in APIRequestInput) (*APIResult, error) {
	const op = OpAPIRequest
	start := time.Now()
	m := &mutation{decl: &apiRequestOp}
	r, err := c.gatewayAdmit(ctx, in, in.Method, in.Path, in.Params, ClassGatewayWrite)
	if r != nil {
		// The input is valid: the records name the request.
		m = r.mutation(in.Approval)
	}
	if err == nil {
		err = c.checkGatewayProtected(ctx, r)
	}
	if err != nil {
		c.auditRefusal(ctx, m, err)
		return nil, c.logged(ctx, op, start, err)
	}
	attrs := []slog.Attr{slog.String("method", r.method), slog.String("path", r.path())}
	plan := c.gatewayPlan(r)
	if in.Plan {
		c.logged(ctx, op, start, nil, attrs...)
		return &APIResult{Method: r.method, Path: r.path(), Redacted: []string{}, Truncated: []string{}, Plan: plan}, nil
	}
	args, err := ArgumentsDigest(op, in)
	if err != nil {
		err = refuse(ErrApprovalRequired, "the arguments could not be digested for the approval (%v)", err)
		c.auditRefusal(ctx, m, err)
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	req := ApprovalRequest{
		Action:    r.method,
		Target:    r.target,
		Params:    m.params[:2],
		Arguments: args,
		Phrase:    c.onCluster(gatewayPhrase(r)),
		Given:     in.Approval,
		Effect:    plan.Effect,
		Plan:      plan,
	}
	if _, err := c.askApprovers(ctx, m, req); err != nil {
		err = withPlan(err, plan)
		c.auditRefusal(ctx, m, err)
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	if err := c.record(ctx, m, AuditApproved, "", ""); err != nil {
		return nil, c.logged(ctx, op, start, refuse(ErrAudit, "the audit record could not be written (%v)", err), attrs...)
	}
	// Most writes answer {"data":null}: decoded through a pointer, null
	// leaves it nil instead of reading as a missing "data" (a RawMessage
	// alone made every such answer a "malformed response" after the
	// write was carried out).
	var rawp *json.RawMessage
	// As in submit: a write being sent is finished and its answer
	// recorded, whatever happens to ctx meanwhile (sent_cancelled.go).
	sent := context.WithoutCancel(ctx)
	if err := c.upstreamErr(c.api.DoCommitted(ctx, r.method, pve.Path(r.segs...), r.params, &rawp)); err != nil {
		err = mayHaveRun(r.redactEcho(err))
		if aerr := c.record(sent, m, AuditFailed, err.Error(), ""); aerr != nil {
			c.log.ErrorContext(sent, "audit record of a failed mutation could not be written", slog.String("error", aerr.Error()))
		}
		return nil, c.logged(sent, op, start, err, attrs...)
	}
	raw := json.RawMessage("null")
	if rawp != nil {
		raw = *rawp
	}
	res := shapeAnswer(r, raw)
	var id string
	if json.Unmarshal(raw, &id) == nil {
		if _, perr := parseUPID(id); perr == nil {
			res.UPID = id
		}
	}
	if aerr := c.record(sent, m, AuditSubmitted, "", res.UPID); aerr != nil {
		c.log.ErrorContext(sent, "audit record of a submitted mutation could not be written", slog.String("error", aerr.Error()))
	}
	res.Approver = m.state.approvedBy
	err = nil
	if ctx.Err() != nil {
		err = &SentBeforeCancelError{UPID: res.UPID, Err: context.Cause(ctx)}
	}
	c.logged(sent, op, start, err, append(attrs, slog.String("upid", res.UPID))...)
	return res, err
}

// gatewayAdmit validates and checks policy for a gateway request: input,
// path rules, parameters, read-only mode, the class, the deny list and the
// node allowlist. Nothing is sent. It returns the request once the input
// is valid, also with a policy refusal (for the audit record), except a
// write whose path holds a secret (checkGatewayPathSecrets), whose record
// must not name the path.
func (c *Client) gatewayAdmit(_ context.Context, in any, method, path string, params map[string]string, class Class) (*gatewayReq, error) {
	if err := c.check(in); err != nil {
		return nil, err
	}
	segs, err := parseGatewayPath(path)
	if err != nil {
		return nil, err
	}
	// Reads too: a read's path goes into the log line, and a secret is
	// never sent through the gateway either way.
	if err := checkGatewayPathSecrets(segs); err != nil {
		return nil, err // no request: its records must not name the path
	}
	vals, err := checkGatewayParams(params)
	if err != nil {
		return nil, err
	}
	r := &gatewayReq{method: method, segs: segs, params: vals, target: pathGuest(segs)}
	if class == ClassGatewayWrite {
		if err := checkGatewayShown(r); err != nil {
			return nil, err
		}
	}
	if class != ClassGateway && c.policy.readOnly {
		return r, refuse(ErrNotAllowed, "the server is in read-only mode")
	}
	if !c.policy.classes[class] {
		return r, refuse(ErrNotAllowed, "the %q class is not enabled by the operator", class)
	}
	if rule := deniedBy(method, segs); rule != nil {
		return r, deniedRefusal(method, r.path(), rule)
	}
	if len(segs) >= 2 && strings.EqualFold(segs[0], "nodes") {
		if err := c.policy.checkNode(segs[1]); err != nil {
			return r, err
		}
	}
	if class == ClassGatewayWrite {
		if err := c.policy.checkGatewayParams(r); err != nil {
			return r, err
		}
		// After the parameters: a forbidden parameter is refused as such
		// on any route.
		if err := checkGatewaySets(r.method, r.segs, r.params); err != nil {
			return r, err
		}
		if err := c.policy.checkGatewayCovered(r); err != nil {
			return r, err
		}
	}
	return r, nil
}

var gatewayParamName = lazyre.New(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// checkGatewayParams validates parameter names and values and returns them
// as url.Values. Values are text: control characters other than newline and
// tab, and invalid UTF-8, are refused.
func checkGatewayParams(params map[string]string) (url.Values, error) {
	bad := func(why string) (url.Values, error) {
		return nil, &ValidationError{Fields: []FieldError{{Field: "params", Problem: why}}}
	}
	if len(params) > MaxGatewayParams {
		return bad("has more than " + strconv.Itoa(MaxGatewayParams) + " parameters")
	}
	vals := url.Values{}
	for _, k := range sortedKeys(params) {
		v := params[k]
		if !gatewayParamName.MatchString(k) {
			return bad(fmt.Sprintf("parameter name %q is not a Proxmox parameter name (a letter, then letters, digits, _ or -; at most 64)", truncate(sanitize.Line(k), 64)))
		}
		if len(v) > MaxGatewayParamLen {
			return bad(fmt.Sprintf("the value of %s is longer than %d bytes", k, MaxGatewayParamLen))
		}
		if !utf8.ValidString(v) {
			return bad(fmt.Sprintf("the value of %s is not valid UTF-8", k))
		}
		for _, ch := range v {
			if ch < 0x20 && ch != '\n' && ch != '\t' || ch == 0x7f {
				return bad(fmt.Sprintf("the value of %s contains a control character", k))
			}
		}
		vals.Set(k, v)
	}
	return vals, nil
}

// forbiddenWriteParam matches parameter names a gateway write may never
// send: what the config class forbids (raw QEMU args, hook scripts,
// cloud-init custom files, host PCI/USB/serial/parallel devices, raw lxc
// lines, container device and mount-point passthrough), and what a
// backup run or job (POST /nodes/{node}/vzdump, POST and PUT
// /cluster/backup) allows to root@pam only (script: a hook script the
// node runs as root; tmpdir and dumpdir: host directories written as
// root), and a VM start's root-only internals (force-cpu: QEMU's -cpu
// as a raw string, as args is; stateuri and migratedfrom: a start as a
// migration's target, waiting for incoming state), and skiplock (root
// only: acts on a guest whatever task holds its lock, which every typed
// mutation refuses to do), and virtiofs (a host directory shared with
// the guest, which the config class never sends either). Secrets (any
// password among them) are secretWriteParam's.
var forbiddenWriteParam = lazyre.New(`(?i)^(args|hookscript|script|tmpdir|dumpdir|force-cpu|stateuri|migratedfrom|skiplock|cicustom|lxc|hostpci\d*|usb\d*|serial\d*|parallel\d*|dev\d+|mp\d+|virtiofs\d*)$`)

// checkGatewayParams is the policy step for a write's parameters:
// forbidden names and secrets (checkGatewaySecrets), and nodes named in
// parameters must be on the allowlist: a single node (node, target,
// target-node) or a node list (nodes of HA groups and rules:
// "pve1:2,pve2").
func (p *policy) checkGatewayParams(r *gatewayReq) error {
	if err := checkGatewaySecrets(r); err != nil {
		return err
	}
	if err := checkHostPaths(r.params); err != nil { // hostpath_params.go
		return err
	}
	if err := checkGatewayNeverKeys(r.params); err != nil {
		return err
	}
	vals := r.params
	for _, k := range sortedKeys(vals) {
		switch strings.ToLower(k) {
		case "node", "target", "target-node":
			if v := vals.Get(k); ValidNode(v) {
				if err := p.checkNode(v); err != nil {
					return err
				}
			}
		case "nodes":
			for _, item := range listItems(vals.Get(k)) {
				node, _, _ := strings.Cut(item, ":") // "pve1:2": a node with its priority
				if err := p.checkNode(node); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkGatewayNeverKeys refuses a write that sets or deletes a config
// never-key ([NeverConfigKey]) by parameter name, or names one in the
// delete or revert list of a config write: what the config class refuses
// whatever the policy (Proxmox's protection flag, container features
// such as nesting and keyctl, a lock, an unused disk, a template) the
// gateway does not send either. Config writes are a dedicated
// operation's and refused as such (checkGatewayCovered); this holds
// wherever else Proxmox takes config keys.
func checkGatewayNeverKeys(vals url.Values) error {
	for _, k := range sortedKeys(vals) {
		if reason, never := NeverConfigKey(k); never {
			return refuse(ErrNotAllowed, "parameter %s is never sent through the gateway: it is a config key no policy allows (%s); nothing was sent", k, reason)
		}
		switch strings.ToLower(k) {
		case "delete", "revert":
			for _, item := range listItems(vals.Get(k)) {
				if reason, never := NeverConfigKey(item); never {
					return refuse(ErrNotAllowed, "%s=%s is never sent through the gateway: %s is a config key no policy allows (%s); nothing was sent", k, truncate(sanitize.Line(vals.Get(k)), 64), item, reason)
				}
			}
		}
	}
	return nil
}

// checkGatewaySecrets refuses a write with a parameter the gateway never
// sends: a forbidden name (forbiddenWriteParam), or a secret (secretWriteParam).
// A secret has no business passing through a model, the person approving
// could not be shown it (it would read [RedactedValue]), and any digest of
// it in the phrase, the plan, the audit record or a grant file would let
// whoever reads them confirm a guessed value offline. The refusal names
// the parameter, never its value, and says that nothing was sent.
func checkGatewaySecrets(r *gatewayReq) error {
	return r.paramSecrets().refusal
}

// paramSecrets scans the parameters once per request for those the
// gateway never sends, and returns the scan. Every step that needs the
// answer reads it here: the policy step (checkGatewaySecrets), the
// effect and the plan shown to the approver (approvedParam), the audit
// records (mutation, shownParam) and the redaction of Proxmox's error
// (redactEcho). Each once scanned every parameter again, up to six times
// per write (TestGatewaySecretsScannedOnce).
func (r *gatewayReq) paramSecrets() *paramScan {
	if r.secrets != nil {
		return r.secrets
	}
	sc := &paramScan{why: map[string]string{}}
	for _, k := range sortedKeys(r.params) {
		var refusal error
		why := "host passthrough, host paths, raw arguments or scripts"
		if forbiddenWriteParam.MatchString(k) {
			refusal = refuse(ErrNotAllowed, "parameter %s is never sent through the gateway (%s); nothing was sent", k, why)
		} else if why = secretWriteParam(k, r.params.Get(k)); why != "" {
			refusal = refuse(ErrNotAllowed, "parameter %s is never sent through the gateway: %s; nothing was sent: a secret must not pass through the model, and the person approving could not be shown it (set it in Proxmox itself)", k, why)
		} else {
			continue
		}
		sc.why[k] = why
		if sc.refusal == nil {
			sc.refusal = refusal
		}
	}
	r.secrets = sc
	return sc
}

// checkGatewayPathSecrets refuses a write whose path holds, in a
// segment, what secretWriteParam refuses in a value (a ticket,
// "password=…"): the path is shown and recorded as it is, in the phrase,
// the plan, the audit records and grant files. The refusal names no
// segment, and the caller records no path.
func checkGatewayPathSecrets(segs []string) error {
	for _, seg := range segs {
		if redact.HoldsTicket(seg) || redact.SecretArgs(seg) != seg {
			return refuse(ErrNotAllowed, "a segment of the path looks like a secret (a Proxmox ticket or a secret-looking argument such as password=…); a secret is never sent through the gateway, nor shown or recorded in its path")
		}
	}
	return nil
}

// secretWriteChecks counts secretWriteParam's runs, so that a test holds
// the gateway to one check per parameter of a request
// (TestGatewaySecretsScannedOnce).
var secretWriteChecks atomic.Int64

// secretWriteParam says why a write parameter can carry a secret, or "":
// its name is one whose value the gateway redacts in answers
// (gatewaySecret, with "value" as under /access: a name that names a
// secret by the one list of internal/redact, such as password, token,
// api_key, psk or pass), or its value holds a Proxmox ticket or quotes a
// secret-looking argument ("--password X", "api_token=X"), as answers
// are redacted by value. What the gateway would hide when reading it
// back, it does not send.
func secretWriteParam(k, v string) string {
	secretWriteChecks.Add(1)
	switch {
	case gatewaySecret(k, v, true):
		return "its name marks a secret: the gateway redacts values under this name in every answer"
	case redact.HoldsTicket(v):
		return "its value holds a Proxmox ticket"
	case redact.SecretArgs(v) != v:
		return "its value quotes a secret-looking argument (a password, secret, token or API key)"
	}
	return ""
}

// guestRef matches a path segment or list item that names a guest: a
// VMID, an HA resource id ("vm:100", "ct:100", or the bare VMID, which
// pve-ha-manager's parse_sid accepts too) or a replication job id
// ("100-0").
var guestRef = lazyre.New(`^(?:(?:vm|ct):)?([0-9]+)(?:-[0-9]+)?$`)

// guestParams are the parameters whose value names guests, one or a list:
// vmid (a list for backups), newid, sid, id (replication jobs), vms (pool
// members) and resources (HA rules).
var guestParams = []string{"vmid", "newid", "target-vmid", "sid", "id", "vms", "resources"}

// listItems splits a Proxmox list value (comma, semicolon or white space
// separated, as pve-common split_list does).
func listItems(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' })
}

// checkGatewayProtected refuses a write that names a protected guest
// (by VMID, name, tag or pool) anywhere Proxmox reads one: a path segment
// (/nodes/{node}/{type}/{vmid}, an HA resource, a replication job, the
// guest of a task's UPID) or a
// guest parameter (guestParams, lists included); and a write that names a
// protected pool.
func (c *Client) checkGatewayProtected(ctx context.Context, r *gatewayReq) error {
	// Pools first: that check needs no read.
	var pools []string
	if len(r.segs) >= 2 && strings.EqualFold(r.segs[0], "pools") {
		pools = append(pools, r.segs[1])
	}
	pools = append(pools, r.params.Get("poolid"), r.params.Get("pool"))
	for _, pool := range pools {
		for _, pp := range c.policy.src.ProtectedPools {
			if pool != "" && strings.EqualFold(pool, pp) {
				return refuse(ErrNotAllowed, "pool %s is protected by the operator", pool)
			}
		}
	}
	var ids []int
	if r.target.VMID != 0 {
		ids = append(ids, r.target.VMID)
	}
	for _, s := range r.segs[1:] {
		if m := guestRef.FindStringSubmatch(s); m != nil {
			ids = appendID(ids, m[1])
		}
		// A task's UPID names the guest it works on (DELETE
		// /nodes/{node}/tasks/{upid} stops it: a migration or backup of
		// that guest left half done).
		if t, err := parseUPID(s); err == nil {
			if m := guestRef.FindStringSubmatch(t.ID); m != nil {
				ids = appendID(ids, m[1])
			}
		}
	}
	for _, k := range guestParams {
		for _, item := range listItems(r.params.Get(k)) {
			if m := guestRef.FindStringSubmatch(item); m != nil {
				ids = appendID(ids, m[1])
			}
		}
	}
	for _, id := range ids {
		t := Target{VMID: id}
		if c.policy.protected[id] {
			return refuse(ErrNotAllowed, "guest %d is protected by the operator", id)
		}
		why, err := c.protection(ctx, t)
		if err != nil {
			return &PreconditionReadError{Err: err}
		}
		if why != "" {
			return refuse(ErrNotAllowed, "guest %d is protected by the operator: %s", id, why)
		}
	}
	return nil
}

func appendID(ids []int, s string) []int {
	if id, err := strconv.Atoi(s); err == nil && ValidVMID(id) && !slices.Contains(ids, id) {
		return append(ids, id)
	}
	return ids
}

// pathGuest returns the guest a path names (/nodes/{node}/{qemu|lxc}/{vmid}
// and below), or the zero Target.
func pathGuest(segs []string) Target {
	if len(segs) < 4 || !strings.EqualFold(segs[0], "nodes") || !strings.EqualFold(segs[2], "qemu") && !strings.EqualFold(segs[2], "lxc") {
		return Target{}
	}
	id, err := strconv.Atoi(segs[3])
	if err != nil || !ValidVMID(id) || strconv.Itoa(id) != segs[3] {
		return Target{}
	}
	return Target{Node: segs[1], Type: GuestType(strings.ToLower(segs[2])), VMID: id}
}

// mutation is the audit and approval view of a gateway write. Its params
// are "path", "params" (the digest), then each parameter, capped. A
// request with a parameter the gateway never sends is refused and never
// approved: its records carry [RedactedValue] instead of the digest, since
// a digest of a secret lets whoever reads the audit log confirm a guessed
// value offline.
func (r *gatewayReq) mutation(given string) *mutation {
	digest := paramsDigest(r.params)
	if checkGatewaySecrets(r) != nil {
		digest = RedactedValue
	}
	ps := []ApprovalParam{{Name: "path", Value: r.path()}, {Name: "params", Value: digest}}
	for _, k := range sortedKeys(r.params) {
		ps = append(ps, ApprovalParam{Name: k, Value: r.shownParam(k, 128)})
	}
	return &mutation{decl: &apiRequestOp, mutationCall: mutationCall{action: r.method, target: r.target,
		params: ps, given: given, requestMethod: r.method, apiPath: r.path()}}
}

// shownParam is a parameter's value as audit records show it: one
// sanitized line, capped, and [RedactedValue] for a name that can carry a
// secret (a refused password must not reach the audit log). The digest
// covers the real value; a request with a secret value is refused and its
// records carry no digest (mutation).
func (r *gatewayReq) shownParam(k string, max int) string {
	if r.secretParam(k) {
		return RedactedValue
	}
	v, _ := sanitize.Cap(sanitize.Line(r.params.Get(k)), max)
	return v
}

// approvedParam is a parameter's value as the plan and its effect show it
// to the person approving: the value as sent, its line breaks, tabs and
// leading or trailing spaces included (folded to one line, "x\n" would
// read as "x"), or [RedactedValue] for a secret, which the policy step
// refuses. checkGatewayShown has refused characters a person does not
// see and bounds the length.
func (r *gatewayReq) approvedParam(k string) string {
	if r.secretParam(k) {
		return RedactedValue
	}
	return r.params.Get(k)
}

// secretParam reports whether parameter k's value is one the gateway never
// shows: a forbidden name or a secret (secretWriteParam). A write with one
// is refused by the policy step; a read (query parameters) is sent, and
// Proxmox's echo of the value redacted (redactEcho).
func (r *gatewayReq) secretParam(k string) bool {
	return r.paramSecrets().why[k] != ""
}

// redactEcho replaces, in Proxmox's error for this request, the values of
// the parameters shownParam redacts: a 400 answer quotes values ("value
// '…' does not match"), and the error reaches the caller, the logs and the
// audit record. Both the value as sent and as the error text sanitizes it
// are replaced.
func (r *gatewayReq) redactEcho(err error) error {
	var ae *APIError
	if !errors.As(err, &ae) {
		return err
	}
	for k := range r.params {
		v := r.params.Get(k)
		if v == "" || !r.secretParam(k) {
			continue
		}
		for _, s := range []string{v, sanitize.Line(v)} {
			ae.Message = strings.ReplaceAll(ae.Message, s, RedactedValue)
			for pk, pv := range ae.Params {
				ae.Params[pk] = strings.ReplaceAll(pv, s, RedactedValue)
			}
		}
	}
	return err
}

// paramsDigest is the first 16 hex digits of the SHA-256 of the parameters
// in their canonical form (url.Values.Encode: sorted by name), or "none".
// It is unkeyed on purpose: anyone can recompute it from the parameters
// the plan shows in full, and a write with a parameter that is not shown
// in full (a secret) is refused (checkGatewaySecrets), so it reveals
// nothing the plan does not.
func paramsDigest(v url.Values) string {
	if len(v) == 0 {
		return "none"
	}
	sum := sha256.Sum256([]byte(v.Encode()))
	return hex.EncodeToString(sum[:8])
}

// gatewayPhrase is the approval phrase of a gateway write:
//
//	APPROVE POST /cluster/ha/groups params=3f1c2a9b0d4e5f61
func gatewayPhrase(r *gatewayReq) string {
	return "APPROVE " + r.method + " " + r.path() + " params=" + paramsDigest(r.params)
}

// GatewayPhrase returns the approval phrase [Client.APIRequest] requires
// for in, or an error when in is not a valid request or has a parameter
// the gateway never sends (a forbidden name or a secret) or a path
// segment that looks like a secret (refused with [ErrNotAllowed]: no
// phrase, so no digest or copy of the secret, is made).
// Nothing is checked against the operator's policy.
func GatewayPhrase(in APIRequestInput) (string, error) {
	if err := Validate(in); err != nil {
		return "", err
	}
	segs, err := parseGatewayPath(in.Path)
	if err != nil {
		return "", err
	}
	vals, err := checkGatewayParams(in.Params)
	if err != nil {
		return "", err
	}
	if err := checkGatewayPathSecrets(segs); err != nil {
		return "", err
	}
	r := &gatewayReq{method: in.Method, segs: segs, params: vals}
	if err := checkGatewaySecrets(r); err != nil {
		return "", err
	}
	return gatewayPhrase(r), nil
}

// gatewayPlan is the plan of a gateway write: what it sends and the
// approval it needs.
func (c *Client) gatewayPlan(r *gatewayReq) *Plan {
	p := &Plan{
		Class:          ClassGatewayWrite,
		Method:         r.method,
		Path:           r.path(),
		Effect:         gatewayEffect(r),
		ApprovalLevels: c.policy.approvalsFor(ClassGatewayWrite),
	}
	if slices.Contains(p.ApprovalLevels, LevelPhrase) {
		p.Approval = c.onCluster(gatewayPhrase(r))
	}
	for k := range r.params {
		if p.Params == nil {
			p.Params = map[string]string{}
		}
		p.Params[k] = r.approvedParam(k)
	}
	return p
}

// MaxGatewayEffectLen caps the effect of a gateway write: the sentence
// naming the method, the path and every parameter in full that the
// approver reads (elicitation form, approval page, "approve CODE"). A
// write whose effect is longer is refused before any approval rather than
// shown cut: a cut could hide a parameter or the end of a value.
const MaxGatewayEffectLen = 480

// plainShown matches a parameter value shown as it is; any other value is
// shown quoted, so that no value can fake the boundary between two
// parameters ("a, b=c").
var plainShown = lazyre.New(`^[A-Za-z0-9._:@/+-]+$`)

// gatewayEffect says what approving sends, from validated input only:
// the method, the path and every parameter in full, except values that
// can carry a secret (approvedParam); checkGatewayShown keeps it within
// MaxGatewayEffectLen.
func gatewayEffect(r *gatewayReq) string {
	s := "send " + r.method + " " + r.path()
	if len(r.params) == 0 {
		return s + " with no parameters"
	}
	var ps []string
	for _, k := range sortedKeys(r.params) {
		v := r.approvedParam(k) // whole, or [redacted] for a secret
		if v != RedactedValue && !plainShown.MatchString(v) {
			v = strconv.Quote(v)
		}
		ps = append(ps, k+"="+v)
	}
	return s + " with " + strings.Join(ps, ", ")
}

// checkGatewayShown refuses a write the approver could not read in full:
// a value with characters a person does not see (BiDi controls, zero-width
// and other invisible format characters), or an effect longer than
// MaxGatewayEffectLen.
func checkGatewayShown(r *gatewayReq) error {
	bad := func(why string) error {
		return &ValidationError{Fields: []FieldError{{Field: "params", Problem: why}}}
	}
	for _, k := range sortedKeys(r.params) {
		if !sanitize.Clean(r.params.Get(k)) {
			return bad("the value of " + k + " holds invisible or BiDi characters, which the approver would not see")
		}
	}
	if n := len(gatewayEffect(r)); n > MaxGatewayEffectLen {
		return bad(fmt.Sprintf("are too long to show the approver in full (%d bytes with the method and path, at most %d): send fewer or shorter parameters, or use a dedicated tool", n, MaxGatewayEffectLen))
	}
	return nil
}
