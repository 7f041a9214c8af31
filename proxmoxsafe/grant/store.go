package grant

import (
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
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// DefaultTTL is how long a grant stays usable after it was asked for.
const DefaultTTL = 10 * time.Minute

// Options configures [Open]. The zero value is fine.
type Options struct {
	// TTL is how long a grant can be approved and used after the call
	// that asked for it. Zero means [DefaultTTL]; up to 24 hours.
	TTL time.Duration
	// Command is the command a refusal tells the operator to run with the
	// grant's code, when plain "proxmox-safe-mcp approve" would not find
	// this directory (the binary's demo keeps its grants apart). Empty
	// means [DefaultCommand].
	Command string
}

// TimeFormat is how grant times are written for people, with their zone:
// in a refusal (UTC: the server's zone may not be the operator's), and as
// the binary's approve, grants list and the approval page show them (the
// local zone).
const TimeFormat = "2006-01-02 15:04:05 MST"

// DefaultCommand is the approve command a refusal names by default.
const DefaultCommand = "proxmox-safe-mcp approve"

// Store keeps grants as files (0600) in a directory (0700), so that a
// grant survives a restart and a used one stays used: a restart never
// makes a grant usable again. It is the approver of the "grant" level
// ([proxmoxsafe.LevelGrant]); the operator decides with [Store.Decide]
// (the binary's "approve CODE" and "deny CODE"). Several processes may
// share the directory; a lock file serialises every change.
type Store struct {
	dir string
	ttl time.Duration
	cmd string
	now func() time.Time
	mu  sync.Mutex
}

// Open opens (creating it 0700) the grant directory dir; opts may be nil.
// A directory another local user could write to (not owned by this user,
// or writable by group or others) is refused: whoever can write it can
// approve.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.TTL == 0:
		o.TTL = DefaultTTL
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
	if err := localfile.CheckPrivate(dir, fi); err != nil {
		return nil, fmt.Errorf("grant directory: %w", err)
	}
	if o.Command == "" {
		o.Command = DefaultCommand
	}
	return &Store{dir: dir, ttl: o.TTL, cmd: o.Command, now: time.Now}, nil
}

// ErrNotFound is returned for a code no grant has.
const ErrNotFound proxmoxsafe.Sentinel = "no grant has this code"

// Decide records the operator's decision on a pending grant: approve or
// deny, by operator (a name for the audit record, e.g. the login name).
// Deciding an expired, decided or used grant is an error.
func (s *Store) Decide(code string, approve bool, operator string) (Grant, error) {
	code = normalizeCode(code)
	var out Grant
	err := s.locked(func() error {
		g, err := s.read(code)
		if err != nil {
			return err
		}
		switch {
		case g.Status != Pending:
			return fmt.Errorf("grant %s is %s, not pending; nothing was changed", code, g.Status)
		case s.now().After(g.Expires):
			return fmt.Errorf("grant %s expired at %s; nothing was changed (repeat the call for a new code)", code, g.Expires.UTC().Format(TimeFormat))
		case approve && !g.Shows():
			return fmt.Errorf("grant %s does not bind what it shows (written by an earlier version, or edited), so no call could use it; nothing was changed (repeat the call for a new code)", code)
		}
		g.Status, g.Operator, g.Decided = Denied, operator, s.now().UTC()
		if approve {
			g.Status = Approved
		}
		out = g
		return s.write(g)
	})
	return out, err
}

// Get returns the grant with this code.
func (s *Store) Get(code string) (Grant, error) {
	var g Grant
	err := s.locked(func() (err error) { g, err = s.read(normalizeCode(code)); return })
	return g, err
}

// List returns every grant kept, newest first; grants expired more than a
// day ago are removed on the way.
func (s *Store) List() ([]Grant, error) {
	var out []Grant
	err := s.locked(func() (err error) { out, err = s.readAll(); return })
	slices.SortFunc(out, func(a, b Grant) int { return b.Created.Compare(a.Created) })
	return out, err
}

func (s *Store) path(code string) string { return filepath.Join(s.dir, code+".json") }

func (s *Store) read(code string) (Grant, error) {
	if !codeRE.MatchString(code) {
		return Grant{}, fmt.Errorf("%q is not a grant code (like K7QF-3MZD)", code)
	}
	raw, err := os.ReadFile(s.path(code))
	if errors.Is(err, os.ErrNotExist) {
		return Grant{}, fmt.Errorf("grant %s: %w", code, ErrNotFound)
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
func (s *Store) readAll() ([]Grant, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []Grant
	for _, e := range entries {
		code, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !codeRE.MatchString(code) {
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
func (s *Store) write(g Grant) error {
	raw, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return s.writeFile(g.Code+".json", append(raw, '\n'))
}

// writeFile replaces the file name in the store's directory atomically
// (0600, synced before the rename).
func (s *Store) writeFile(name string, raw []byte) error {
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
func (s *Store) locked(fn func() error) error {
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
