package proxmoxsafe

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/localfile"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// DefaultGrantTTL is how long a grant stays usable after it was asked for.
const DefaultGrantTTL = 10 * time.Minute

// GrantStatus is where a grant is in its life.
type GrantStatus string

// The grant statuses.
const (
	// GrantPending: asked for; waiting for the operator.
	GrantPending GrantStatus = "pending"
	// GrantApproved: the operator approved; the next matching call uses it.
	GrantApproved GrantStatus = "approved"
	// GrantDenied: the operator denied it.
	GrantDenied GrantStatus = "denied"
	// GrantUsed: a call used it; it approves nothing more.
	GrantUsed GrantStatus = "used"
)

// Grant is one out-of-band approval: asked for by a refused call, decided
// by the operator outside the MCP session, used at most once by the same
// call repeated. It is bound to the action, the target, the parameters
// that change the effect, the digest of the exact arguments and a
// fingerprint of the guest state shown ([GuestState.Fingerprint]).
type Grant struct {
	// Code names the grant to the operator, e.g. "K7QF-3MZD".
	Code string `json:"code"`
	// Action, Target and Params are what it approves.
	Action string   `json:"action"`
	Target Target   `json:"target"`
	Params []string `json:"params,omitempty"`
	// Arguments is the digest of the call's arguments
	// ([ArgumentsDigest]): only a call with the same arguments matches.
	Arguments string `json:"arguments"`
	// Effect and State are the plan the operator is shown; Plan is the
	// request it would send (nil for operations without a single one).
	Effect string `json:"effect"`
	State  string `json:"state"`
	Plan   *Plan  `json:"plan,omitempty"`
	// Binding digests action, target, parameters, arguments digest and
	// [GuestState.Fingerprint]; a call matches only with the same digest.
	Binding string `json:"binding"`
	// Created and Expires bound its life.
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Status, Operator and Decided record the decision and the use.
	Status   GrantStatus `json:"status"`
	Operator string      `json:"operator,omitempty"`
	Decided  time.Time   `json:"decided,omitzero"`
	Used     time.Time   `json:"used,omitzero"`
}

// GrantOptions configures [OpenGrantStore]. The zero value is fine.
type GrantOptions struct {
	// TTL is how long a grant can be approved and used after the call
	// that asked for it. Zero means [DefaultGrantTTL]; up to 24 hours.
	TTL time.Duration
}

// GrantStore keeps grants as files (0600) in a directory (0700), so that
// a grant survives a restart and a used one stays used: a restart never
// makes a grant usable again. It is the approver of the "grant" level
// ([LevelGrant]); the operator decides with [GrantStore.Decide] (the
// binary's "approve CODE" and "deny CODE"). Several processes may share
// the directory; a lock file serialises every change.
type GrantStore struct {
	dir string
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
}

// OpenGrantStore opens (creating it 0700) the grant directory dir; opts
// may be nil. A directory another local user could write to (not owned by
// this user, or writable by group or others) is refused: whoever can write
// it can approve.
func OpenGrantStore(dir string, opts *GrantOptions) (*GrantStore, error) {
	var o GrantOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.TTL == 0:
		o.TTL = DefaultGrantTTL
	case o.TTL < time.Minute || o.TTL > 24*time.Hour:
		return nil, fmt.Errorf("grant TTL %s is out of range (1m to 24h)", o.TTL)
	}
	if dir == "" {
		return nil, errors.New("grant directory is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("grant directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("grant directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("grant directory %s is not a directory", dir)
	}
	if err := localfile.CheckPrivate(dir, fi); err != nil { // private_*.go
		return nil, fmt.Errorf("grant directory: %w", err)
	}
	return &GrantStore{dir: dir, ttl: o.TTL, now: time.Now}, nil
}

// Name implements [Approver]: "grant".
func (*GrantStore) Name() string { return string(LevelGrant) }

// ErrGrantNotFound is returned for a code no grant has.
const ErrGrantNotFound Sentinel = "no grant has this code"

// Approve implements [Approver]: a call approves when an approved,
// unexpired grant bound to exactly this request exists; that grant is then
// used. Otherwise it refuses with the code of a pending grant (an existing
// one for this request, or a new one) and the plan.
func (s *GrantStore) Approve(ctx context.Context, req ApprovalRequest) error {
	binding := grantBinding(req)
	var used *Grant
	var pending *Grant
	err := s.locked(func() error {
		now := s.now()
		grants, err := s.readAll()
		if err != nil {
			return err
		}
		for i := range grants {
			g := &grants[i]
			if g.Binding != binding || now.After(g.Expires) {
				continue
			}
			switch g.Status {
			case GrantApproved:
				g.Status, g.Used = GrantUsed, now
				if err := s.write(*g); err != nil {
					return err
				}
				used = g
				return nil
			case GrantPending:
				pending = g
			}
		}
		if pending != nil {
			return nil
		}
		g := Grant{
			Action: req.Action, Target: req.Target, Params: paramStrings(req.Params), Arguments: req.Arguments,
			Effect: req.Effect, State: stateSummary(req.State), Plan: req.Plan, Binding: binding,
			Created: now.UTC(), Expires: now.Add(s.ttl).UTC(), Status: GrantPending,
		}
		for range 5 {
			if g.Code, err = newGrantCode(); err != nil {
				return err
			}
			if _, err := os.Stat(s.path(g.Code)); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
		if err := s.write(g); err != nil {
			return err
		}
		pending = &g
		return nil
	})
	if err != nil {
		return refuse(ErrApprovalRequired, "the grant store could not be used (%v)", err)
	}
	if used != nil {
		NoteApproval(ctx, ApprovalNote{Grant: used.Code, Operator: used.Operator})
		return nil
	}
	return &GrantRequiredError{Grant: *pending, Plan: req.Plan}
}

// GrantRequiredError is the refusal of the grant level: the operator must
// approve Grant.Code out of band before the same call is repeated. It
// matches [ErrApprovalRequired].
type GrantRequiredError struct {
	// Grant is the pending grant, with the plan the operator will see.
	Grant Grant
	// Plan is the same plan a call with plan: true returns for this
	// input and state; nil for operations without one.
	Plan *Plan
}

// Error says what the operator must do; it holds the code and the plan,
// never a secret.
func (e *GrantRequiredError) Error() string {
	g := e.Grant
	return fmt.Sprintf("approval required: an operator must approve grant %s out of band (on the server host: proxmox-safe-mcp approve %s) "+
		"before %s; then repeat this call unchanged. Plan: %s on %s; approving will %s; current state: %s; no action was taken",
		g.Code, g.Code, g.Expires.Format(time.RFC3339), g.Action, g.Target, g.Effect, g.State)
}

// Is makes the error match ErrApprovalRequired.
func (e *GrantRequiredError) Is(target error) bool { return target == ErrApprovalRequired }

// Decide records the operator's decision on a pending grant: approve or
// deny, by operator (a name for the audit record, e.g. the login name).
// Deciding an expired, decided or used grant is an error.
func (s *GrantStore) Decide(code string, approve bool, operator string) (Grant, error) {
	code = normalizeGrantCode(code)
	var out Grant
	err := s.locked(func() error {
		g, err := s.read(code)
		if err != nil {
			return err
		}
		switch {
		case g.Status != GrantPending:
			return fmt.Errorf("grant %s is %s, not pending; nothing was changed", code, g.Status)
		case s.now().After(g.Expires):
			return fmt.Errorf("grant %s expired at %s; nothing was changed (repeat the call for a new code)", code, g.Expires.Format(time.RFC3339))
		}
		g.Status, g.Operator, g.Decided = GrantDenied, operator, s.now().UTC()
		if approve {
			g.Status = GrantApproved
		}
		out = g
		return s.write(g)
	})
	return out, err
}

// Get returns the grant with this code.
func (s *GrantStore) Get(code string) (Grant, error) {
	var g Grant
	err := s.locked(func() (err error) { g, err = s.read(normalizeGrantCode(code)); return })
	return g, err
}

// List returns every grant kept, newest first; grants expired more than a
// day ago are removed on the way.
func (s *GrantStore) List() ([]Grant, error) {
	var out []Grant
	err := s.locked(func() (err error) { out, err = s.readAll(); return })
	slices.SortFunc(out, func(a, b Grant) int { return b.Created.Compare(a.Created) })
	return out, err
}

// grantCodeRE is the code format: 8 characters of Crockford's base32
// (no I, L, O, U), shown as XXXX-XXXX.
var grantCodeRE = lazyre.New(`^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$`)

const grantAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func newGrantCode() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = grantAlphabet[int(b[i])%len(grantAlphabet)]
	}
	return string(b[:4]) + "-" + string(b[4:]), nil
}

func normalizeGrantCode(code string) string {
	return strings.ToUpper(strings.TrimSpace(code))
}

// grantBinding digests what a grant approves.
func grantBinding(req ApprovalRequest) string {
	raw, _ := json.Marshal([]any{req.Action, req.Target.String(), paramStrings(req.Params), req.Arguments, req.State.Fingerprint()})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

func (s *GrantStore) path(code string) string { return filepath.Join(s.dir, code+".json") }

func (s *GrantStore) read(code string) (Grant, error) {
	if !grantCodeRE.MatchString(code) {
		return Grant{}, fmt.Errorf("%q is not a grant code (like K7QF-3MZD)", code)
	}
	raw, err := os.ReadFile(s.path(code))
	if errors.Is(err, os.ErrNotExist) {
		return Grant{}, fmt.Errorf("grant %s: %w", code, ErrGrantNotFound)
	}
	if err != nil {
		return Grant{}, err
	}
	var g Grant
	if err := json.Unmarshal(raw, &g); err != nil || g.Code != code {
		return Grant{}, fmt.Errorf("grant file %s is damaged", s.path(code))
	}
	return g, nil
}

// readAll reads every grant, removing those expired for over a day (an
// expired grant approves nothing, so forgetting it cannot re-enable it).
func (s *GrantStore) readAll() ([]Grant, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []Grant
	for _, e := range entries {
		code, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !grantCodeRE.MatchString(code) {
			continue
		}
		g, err := s.read(code)
		if err != nil {
			return nil, err
		}
		if s.now().After(g.Expires.Add(24 * time.Hour)) {
			_ = os.Remove(s.path(code))
			continue
		}
		out = append(out, g)
	}
	return out, nil
}

// write replaces a grant's file atomically (0600).
func (s *GrantStore) write(g Grant) error {
	raw, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return s.writeFile(g.Code+".json", append(raw, '\n'))
}

// writeFile replaces the file name in the store's directory atomically
// (0600, synced before the rename).
func (s *GrantStore) writeFile(name string, raw []byte) error {
	tmp, err := os.CreateTemp(s.dir, ".grant-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(s.dir, name))
}

// locked runs fn holding the store's lock: a mutex in this process and an
// exclusive lock on dir/.lock across processes.
func (s *GrantStore) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := localfile.TryLock(f)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the grant store is locked by another process")
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer localfile.Unlock(f)
	return fn()
}
