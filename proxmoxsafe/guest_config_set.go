package proxmoxsafe

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// OpSetGuestConfig is the name of [Client.SetGuestConfig].
const OpSetGuestConfig Operation = "SetGuestConfig"

// setGuestConfigOp declares [Client.SetGuestConfig].
var setGuestConfigOp = operation{verify: configVerifier, info: OperationInfo{
	Name:            OpSetGuestConfig,
	Class:           ClassConfig,
	Method:          "POST",
	ContainerMethod: "PUT",
	Route:           "/nodes/{node}/{type}/{vmid}/config",
	NodeTargeted:    true,
	Actions: []ActionInfo{
		{Name: "config", Risk: "the guest runs with the new values (some only from its next start); a wrong value, such as too little memory, can break what runs on it."},
	},
	ApprovalFormat: "APPROVE config <node>/<type>/<vmid> <key>=<value>…[ delete=<key,…>]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state, config, pending changes and running tasks first"},
		{Path: pathVMs, Name: "VM.Config.CPU",
			Note: "for cores, sockets, cpulimit and cpuunits"},
		{Path: pathVMs, Name: "VM.Config.Memory",
			Note: "for memory, balloon and swap"},
		{Path: pathVMs, Name: "VM.Config.Options",
			Note: "for name, hostname, description, tags and onboot"},
	},
}}

// SetGuestConfigInput names the config keys [Client.SetGuestConfig] sets
// or deletes on one guest.
type SetGuestConfigInput struct {
	GuestRef
	// Set maps config keys to new values, as Proxmox's config API takes
	// them: numbers as digits, booleans as 0 or 1, tags separated by ";".
	// Every key must be on the operator's allowlist ([Policy.ConfigKeys]).
	Set map[string]string `json:"set,omitempty" validate:"max=32" jsonschema:"e.g. {\"cores\": \"4\"}."`
	// Delete lists config keys to remove (Proxmox's defaults apply
	// again); each must be on the allowlist and set today.
	Delete []string `json:"delete,omitempty" validate:"max=32" jsonschema:"Keys to reset to Proxmox's default."`
	Controls
}

// Target returns the guest the input names.
func (in SetGuestConfigInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// ApprovalPhrase returns the phrase that approves this input, e.g.
// "APPROVE config pve1/qemu/101 cores=4 memory=8192 delete=tags". Values
// appear as they will be sent (tags sorted and joined by ";"), a
// description as "sha256:" and 16 hex digits. For an invalid input it
// returns "" (the call is refused before any approval).
func (in SetGuestConfigInput) ApprovalPhrase() string {
	norm, err := in.normalized()
	if err != nil {
		return ""
	}
	return ApprovalPhrase("config", in.Target(), configApprovalParams(norm, in.Delete)...)
}

// normalized checks every key and value before any I/O and returns the
// values as they will be sent.
func (in SetGuestConfigInput) normalized() (map[string]string, error) {
	var fe []FieldError
	if len(in.Set) == 0 && len(in.Delete) == 0 {
		fe = append(fe, FieldError{Field: "set", Problem: "set or delete must name at least one config key"})
	}
	keyProblem := func(k string) string {
		if reason, never := NeverConfigKey(k); never {
			return "can never be changed through this server: " + reason
		}
		spec, ok := settableConfigKeys[k]
		switch {
		case !ok:
			return "is not a config key this server can change (settable: " + strings.Join(SettableConfigKeys(), ", ") + ")"
		case !slices.Contains(spec.types, in.Type):
			return "is not a config key of a " + string(in.Type) + " guest"
		}
		return ""
	}
	norm := make(map[string]string, len(in.Set))
	for _, k := range slices.Sorted(mapKeys(in.Set)) {
		field := "set." + quoteKey(k)
		if p := keyProblem(k); p != "" {
			fe = append(fe, FieldError{Field: field, Problem: p})
			continue
		}
		if in.Set[k] == "" {
			fe = append(fe, FieldError{Field: field, Problem: "is empty; to remove a key, list it in delete"})
			continue
		}
		v, problem := settableConfigKeys[k].check(in.Type, in.Set[k])
		if problem != "" {
			fe = append(fe, FieldError{Field: field, Problem: problem})
			continue
		}
		norm[k] = v
	}
	for i, k := range in.Delete {
		field := "delete." + quoteKey(k)
		switch p := keyProblem(k); {
		case p != "":
			fe = append(fe, FieldError{Field: field, Problem: p})
		case slices.Contains(in.Delete[:i], k):
			fe = append(fe, FieldError{Field: field, Problem: "is listed twice"})
		default:
			if _, both := in.Set[k]; both {
				fe = append(fe, FieldError{Field: field, Problem: "is also in set; a key is either set or deleted"})
			}
		}
	}
	if len(fe) > 0 {
		return nil, &ValidationError{Fields: fe}
	}
	return norm, nil
}

// quoteKey renders a caller's key for an error: sanitized, capped.
func quoteKey(k string) string {
	s, _ := sanitize.Cap(sanitize.Line(k), MaxConfigKeyLen)
	return strconv.Quote(s)
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// configApprovalParams are the phrase's parameters: every key set, sorted,
// with its value as displayed, then the deleted keys.
func configApprovalParams(norm map[string]string, del []string) []ApprovalParam {
	var ps []ApprovalParam
	for _, k := range slices.Sorted(mapKeys(norm)) {
		ps = append(ps, ApprovalParam{Name: k, Value: displayValue(k, norm[k])})
	}
	if len(del) > 0 {
		ps = append(ps, ApprovalParam{Name: "delete", Value: strings.Join(slices.Sorted(slices.Values(del)), ",")})
	}
	return ps
}

// SetGuestConfig sets or deletes config keys of one guest (class
// "config"; a VM through POST …/config, a qmconfig task; a container
// through PUT …/config, which Proxmox applies before it answers, so the
// receipt has no UPID and says so).
//
// Before any request every key must be settable ([SettableConfigKeys]),
// never a never-key ([NeverConfigKey]), a key of the guest's type, and
// its value must pass Proxmox's schema for that key; then the key must
// be on the operator's allowlist ([Policy.ConfigKeys]). It then runs the
// pipeline of [Client.GuestPower]: the guest must not be protected,
// locked or a template; the fresh config (GET …/config and …/pending)
// gives every key's current and pending value, which the effect, the
// plan and [Receipt.Changes] show next to the new one; a delete of a key
// that is not set, a change that changes nothing, and a balloon above
// the memory are refused. The request carries the digest of the config
// read, so Proxmox refuses it when the config changed meanwhile.
//
// The approval phrase names every key and value (see
// [SetGuestConfigInput.ApprovalPhrase]); a description is bound by its
// digest, never quoted, in the phrase, the plan and the audit record.
//
// With in.Wait it verifies that every change reads back: a running guest
// takes some keys at once (name, description, tags, onboot, balloon, a
// container's cores and memory) and holds the others (a VM's cores,
// sockets, memory without memory hotplug) until its next start: those
// are reported in [Outcome.Pending], not as applied.
func (c *Client) SetGuestConfig(ctx context.Context, in SetGuestConfigInput) (*Receipt, error) {
	t := in.Target()
	// The values are checked (and the phrase built) before anything else;
	// an invalid input is refused by checkInput, still before any I/O.
	norm, normErr := in.normalized()
	var changes []ConfigChange
	var digest string
	form, planForm := url.Values{}, url.Values{}
	raw := c.configRead(t)
	pending := newPrefetch(func(ctx context.Context) (map[string]pendingEntry, error) { return c.readPending(ctx, t) })
	m := &mutation{decl: &setGuestConfigOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "config",
		input:    in,
		target:   t,
		given:    in.Approval,
		params:   configApprovalParams(norm, in.Delete),
		checkInput: func() error {
			return normErr
		},
		allow: func(p *policy) error {
			for _, k := range append(slices.Sorted(mapKeys(in.Set)), in.Delete...) {
				if !p.configKeys[k] {
					return refuse(ErrNotAllowed, "config key %q is not on the operator's config key allowlist (allowed: %s)", k, strings.Join(sortedSet(p.configKeys), ", "))
				}
			}
			return nil
		},
		prefetch: []prefetcher{raw, pending},
		precondition: func(ctx context.Context, s GuestState) error {
			if _, err := configForChange(ctx, t, s, raw, &digest); err != nil {
				return err
			}
			entries, err := pending.get(ctx)
			if err != nil {
				return err
			}
			if changes, err = configChanges(t, s, norm, in.Delete, entries); err != nil {
				return err
			}
			fillConfigForms(form, planForm, norm, in.Delete, digest)
			return nil
		},
		effect:   func(s GuestState) string { return configEffect(t, s, changes) },
		path:     guestPath(t, "config"),
		form:     form,
		planForm: planForm,
		// Both answers are handled: a task id (qemu POST) or null (PUT,
		// and a POST that finished within background_delay).
		answersNull: true,
		changes:     func() []ConfigChange { return slices.Clone(changes) },
	}}
	return c.waitIfAsked(ctx, in.Wait, m)
}

// configChanges compares the wanted values with the fresh config and
// returns the changes, or a refusal.
func configChanges(t Target, s GuestState, norm map[string]string, del []string, entries map[string]pendingEntry) ([]ConfigChange, error) {
	who := describe(t, s)
	var out []ConfigChange
	changed := false
	for _, k := range slices.Sorted(mapKeys(norm)) {
		e := entries[k]
		ch := ConfigChange{Key: k, New: displayValue(k, norm[k])}
		if e.hasValue {
			ch.Current = displayValue(k, e.value)
		}
		if e.hasPending {
			ch.Pending = displayValue(k, e.pending)
		}
		if !e.hasValue || ch.Current != ch.New || (e.hasPending && ch.Pending != ch.New) || e.deletePending {
			changed = true
		}
		out = append(out, ch)
	}
	for _, k := range slices.Sorted(slices.Values(del)) {
		e := entries[k]
		if !e.hasValue && !e.hasPending {
			return nil, refuse(ErrPrecondition, "%s has no %s set; there is nothing to delete", who, k)
		}
		ch := ConfigChange{Key: k, Delete: true}
		if e.hasValue {
			ch.Current = displayValue(k, e.value)
		}
		if e.hasPending {
			ch.Pending = displayValue(k, e.pending)
		}
		changed = changed || !e.deletePending
		out = append(out, ch)
	}
	if !changed {
		return nil, refuse(ErrPrecondition, "%s already has these values; nothing would change", who)
	}
	if t.Type == TypeQEMU {
		if err := balloonFits(who, norm, del, entries); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// balloonFits refuses a balloon target above the memory, as Proxmox does
// ("balloon value too large"), from the values the VM will have.
func balloonFits(who string, norm map[string]string, del []string, entries map[string]pendingEntry) error {
	if norm["memory"] == "" && norm["balloon"] == "" {
		return nil
	}
	will := func(k string) string {
		if v, ok := norm[k]; ok {
			return v
		}
		if slices.Contains(del, k) {
			return ""
		}
		if e := entries[k]; e.hasPending {
			return e.pending
		} else if e.hasValue {
			return e.value
		}
		return ""
	}
	mem, err := strconv.Atoi(strings.TrimPrefix(will("memory"), "current="))
	if err != nil || mem == 0 {
		mem = 512 // Proxmox's default
	}
	if b, _ := strconv.Atoi(will("balloon")); b > mem {
		return refuse(ErrPrecondition, "the balloon target of %s (%d MiB) would exceed its memory (%d MiB); Proxmox refuses that", who, b, mem)
	}
	return nil
}

// fillConfigForms fills the request's form and the form a plan shows
// (free text by digest).
func fillConfigForms(form, plan url.Values, norm map[string]string, del []string, digest string) {
	clear(form)
	clear(plan)
	for k, v := range norm {
		form.Set(k, v)
		plan.Set(k, displayValue(k, v))
	}
	if len(del) > 0 {
		d := strings.Join(slices.Sorted(slices.Values(del)), ",")
		form.Set("delete", d)
		plan.Set("delete", d)
	}
	if digest != "" {
		form.Set("digest", digest)
		plan.Set("digest", digest)
	}
}

// configEffect says what approving does: every key's current → new value,
// and what a running guest does with it.
func configEffect(t Target, s GuestState, changes []ConfigChange) string {
	var parts []string
	for _, ch := range changes {
		cur := ch.Current
		if cur == "" {
			cur = "(unset)"
		}
		if ch.Pending != "" {
			cur += " (pending: " + ch.Pending + ")"
		}
		if ch.Delete {
			parts = append(parts, "delete "+ch.Key+" (now "+cur+")")
			continue
		}
		parts = append(parts, ch.Key+" "+cur+" → "+ch.New)
	}
	e := "change the configuration of " + describe(t, s) + ": " + strings.Join(parts, ", ")
	if s.Status == "running" {
		e += "; it is running: Proxmox applies at once what it can hotplug, the rest (e.g. a VM's cores, sockets or memory without memory hotplug) waits until its next start and is reported as pending"
	}
	return e
}

// approvalLimit: the phrase names every key and value.
func (SetGuestConfigInput) approvalLimit() int { return MaxConfigApprovalLen }
