package proxmoxsafe

import (
	"fmt"
	"net/http"
	"strings"
)

// Sentinel is the type of this package's sentinel errors. They are
// constants, so no program can reassign them; compare with [errors.Is].
type Sentinel string

// Error implements the error interface.
func (s Sentinel) Error() string { return string(s) }

// Sentinel errors. Every error this package returns for a refusal or an
// upstream failure matches exactly one of them with [errors.Is].
const (
	// ErrInvalidInput: an input broke Proxmox's own rules. Nothing was sent.
	ErrInvalidInput Sentinel = "invalid input"
	// ErrNotAllowed: the operator's policy does not allow this.
	ErrNotAllowed Sentinel = "not allowed by policy"
	// ErrApprovalRequired: the approval phrase was missing or wrong.
	ErrApprovalRequired Sentinel = "approval required"
	// ErrPrecondition: the guest's current state makes the action unsafe or
	// pointless (locked, template, already in the requested state, …).
	ErrPrecondition Sentinel = "precondition failed"
	// ErrAudit: the audit record could not be written, so nothing was done.
	ErrAudit Sentinel = "audit log unavailable"
	// ErrUnauthorized: Proxmox rejected the API token (HTTP 401).
	ErrUnauthorized Sentinel = "unauthorized"
	// ErrForbidden: the token lacks a privilege (HTTP 403).
	ErrForbidden Sentinel = "forbidden"
	// ErrNotFound: the node, guest or task does not exist where it was named.
	ErrNotFound Sentinel = "not found"
	// ErrTaskFailed: a Proxmox task stopped with an error exit status.
	ErrTaskFailed Sentinel = "task failed"
	// ErrUpstream: any other failure talking to Proxmox.
	ErrUpstream Sentinel = "proxmox request failed"
)

// noAction is appended to every refusal so a reader knows nothing happened.
const noAction = "no action was taken"

// RefusalError is returned when a mutation is refused before anything was
// sent to Proxmox. Kind is one of [ErrInvalidInput], [ErrNotAllowed],
// [ErrPrecondition], [ErrApprovalRequired] or [ErrAudit].
type RefusalError struct {
	Kind   error
	Reason string
	// Plan is set on an approval refusal (Kind [ErrApprovalRequired])
	// that came after every other check: the same plan a call with plan:
	// true returns. It is nil on every other refusal.
	Plan *Plan
}

// Error implements the error interface.
func (e *RefusalError) Error() string {
	return e.Kind.Error() + ": " + e.Reason + "; " + noAction
}

// Unwrap returns the sentinel the error matches.
func (e *RefusalError) Unwrap() error { return e.Kind }

func refuse(kind error, format string, args ...any) *RefusalError {
	return &RefusalError{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// ValidationError lists every input field that broke a rule. It matches
// [ErrInvalidInput]. Nothing was sent to Proxmox.
type ValidationError struct {
	Fields []FieldError
}

// FieldError is one invalid input field.
type FieldError struct {
	// Field is the JSON name of the field, e.g. "vmid".
	Field string `json:"field"`
	// Problem says what is wrong in plain words.
	Problem string `json:"problem"`
	// Rule is the validate rule that failed, e.g. "pve_node" or "max"; empty
	// when the field was checked by other means.
	Rule string `json:"-"`
}

// Error implements the error interface.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Problem
	}
	return ErrInvalidInput.Error() + ": " + strings.Join(parts, "; ") + "; " + noAction
}

// Unwrap returns the sentinel the error matches.
func (e *ValidationError) Unwrap() error { return ErrInvalidInput }

// ApprovalError is returned when the approval phrase is missing or does not
// match. It matches [ErrApprovalRequired] and carries what a human needs to
// decide: the exact phrase, the guest's current state and the effect.
type ApprovalError struct {
	// Required is the exact phrase that approves this action on this target.
	Required string
	// Given reports whether some (wrong) approval text was supplied.
	Given bool
	// Action and Target say what would be done.
	Action string
	Target Target
	// State is the guest state read just now.
	State GuestState
	// Effect describes in one sentence what approving will do.
	Effect string
	// Plan is the same plan a call with plan: true returns for this
	// input and state ([Receipt.Plan]); nil for operations without one.
	Plan *Plan
}

// Error implements the error interface.
func (e *ApprovalError) Error() string {
	what := "missing"
	if e.Given {
		what = "does not match"
	}
	return fmt.Sprintf("%s: approval phrase %s; to %s, approve with exactly %q; %s",
		ErrApprovalRequired, what, e.Effect, e.Required, noAction)
}

// Unwrap returns the sentinel the error matches.
func (e *ApprovalError) Unwrap() error { return ErrApprovalRequired }

// APIError is an error answer from Proxmox. Path never contains secrets or
// query strings; Message is sanitized and capped.
type APIError struct {
	Method     string
	Path       string
	StatusCode int
	// Message is Proxmox's error text (from the reason phrase, the "message"
	// field of newer versions, and the per-parameter "errors" map).
	Message string
	// Params holds per-parameter messages of a 400 answer.
	Params map[string]string

	// ticket and relogged say, for the 401 hint, that the client used
	// ticket authentication and had already logged in again.
	ticket, relogged bool
}

// Error implements the error interface.
func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	s := fmt.Sprintf("proxmox: %s %s: %d %s", e.Method, e.Path, e.StatusCode, msg)
	switch e.StatusCode {
	case http.StatusUnauthorized:
		s += " (" + unauthorizedHint(e) + ")"
	case http.StatusForbidden:
		if path, priv, ok := parsePermissionCheck(e.Message); ok {
			s += fmt.Sprintf(" (the API token lacks privilege %s on %s)", priv, path)
		} else {
			s += " (the API token lacks a privilege for this request)"
		}
	default:
		if why := forwardStatus(e.StatusCode); why != "" {
			s += " (" + why + ")"
		}
	}
	return s
}

// forwardStatus names the pseudo-statuses 595-599 that pveproxy answers
// when forwarding a request to another node fails (AnyEvent::HTTP's 59x
// pseudo-statuses, passed on by pve-http-server).
func forwardStatus(code int) string {
	switch code {
	case 595:
		return "Proxmox could not connect to the node it forwarded the request to: the node is offline or unreachable"
	case 596:
		return "Proxmox could not send the request to the node it forwarded it to (TLS or connection error): the node may be down or restarting"
	case 597:
		return "the node Proxmox forwarded the request to stopped answering mid-response"
	case 598:
		return "Proxmox aborted the request it forwarded to another node"
	case 599:
		return "forwarding the request to another node failed"
	}
	return ""
}

// Is maps the answer to exactly one of this package's sentinels:
// [ErrUnauthorized] for 401, [ErrForbidden] for 403, [ErrNotFound] for
// Proxmox's ways of saying "no such node, guest or task", and
// [ErrUpstream] for every other answer.
func (e *APIError) Is(target error) bool {
	return target == e.sentinel()
}

func (e *APIError) sentinel() Sentinel {
	switch {
	case e.StatusCode == http.StatusUnauthorized:
		return ErrUnauthorized
	case e.StatusCode == http.StatusForbidden:
		return ErrForbidden
	case e.notFound():
		return ErrNotFound
	}
	return ErrUpstream
}

// notFound recognises Proxmox's ways of saying "no such thing": it has no 404
// for guests, only a 500 about the missing config file.
func (e *APIError) notFound() bool {
	if e.StatusCode == http.StatusNotFound {
		return true
	}
	m := e.Message
	return (e.StatusCode == http.StatusInternalServerError &&
		(strings.HasPrefix(m, "Configuration file ") && strings.Contains(m, "does not exist") ||
			strings.HasPrefix(m, "hostname lookup "))) ||
		(e.StatusCode == http.StatusBadRequest && e.Params["upid"] == "no such task")
}

// MissingPrivilege returns the ACL path and privilege named by a 403
// "Permission check failed (<path>, <priv>)" answer.
func (e *APIError) MissingPrivilege() (path, priv string, ok bool) {
	if e.StatusCode != http.StatusForbidden {
		return "", "", false
	}
	return parsePermissionCheck(e.Message)
}

func parsePermissionCheck(msg string) (path, priv string, ok bool) {
	rest, found := strings.CutPrefix(msg, "Permission check failed (")
	if !found {
		return "", "", false
	}
	rest, found = strings.CutSuffix(rest, ")")
	if !found {
		return "", "", false
	}
	path, priv, found = strings.Cut(rest, ", ")
	if !found || path == "" || priv == "" {
		return "", "", false
	}
	return path, priv, true
}

// TaskError reports a task that stopped with an error. It matches [ErrTaskFailed].
type TaskError struct {
	UPID       string
	ExitStatus string
}

// Error implements the error interface.
func (e *TaskError) Error() string {
	return fmt.Sprintf("%s: %s: %s", ErrTaskFailed, e.UPID, e.ExitStatus)
}

// Unwrap returns the sentinel the error matches.
func (e *TaskError) Unwrap() error { return ErrTaskFailed }

// PreconditionReadError reports that the state a mutation must be checked
// against could not be read, so the mutation was not attempted. It wraps the
// cause (often an *[APIError]: errors.Is(err, [ErrNotFound]) still works).
type PreconditionReadError struct {
	Err error
}

// Error implements the error interface.
func (e *PreconditionReadError) Error() string {
	return "cannot check the guest's current state: " + e.Err.Error() + "; " + noAction
}

// Unwrap returns the cause.
func (e *PreconditionReadError) Unwrap() error { return e.Err }
