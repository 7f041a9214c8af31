package proxmoxsafe

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
)

// Completion proof of the config class: the receipt's Changes must read
// back from the guest. A set key counts as done when its value is the new
// one (applied) or when Proxmox holds the new value for the next start
// (pending: reported as such, never as applied); a deleted key when it is
// gone or its deletion is pending; a grown disk when its size= is at
// least the new size.

// configVerifier proves a config change (resize, config): every change
// of the receipt reads back from the guest's config.
var configVerifier = &verifier{needs: "their changes", proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
	if len(r.Changes) == 0 {
		return proof{}, &ValidationError{Fields: []FieldError{{Field: "receipt.changes", Problem: "is required to verify a " + r.Action}}}
	}
	observe := func(ctx context.Context, w *waiter) (bool, error) { return w.observeConfig(ctx) }
	if r.Action == "resize" {
		observe = func(ctx context.Context, w *waiter) (bool, error) { return w.observeResize(ctx) }
	}
	return proof{what: r.Action + " of " + r.Target.guestString(), expected: "the changes read back from the guest's config", observe: observe}, nil
}}

// pendingEntry is one entry of GET …/pending, values as config text.
type pendingEntry struct {
	value, pending         string
	hasValue, hasPending   bool
	deletePending, present bool
}

// readPending reads GET …/pending into key → entry.
func (c *Client) readPending(ctx context.Context, t Target) (map[string]pendingEntry, error) {
	var raw []struct {
		Key     string          `json:"key"`
		Value   json.RawMessage `json:"value"`
		Pending json.RawMessage `json:"pending"`
		Delete  json.RawMessage `json:"delete"`
	}
	if err := c.get(ctx, guestPath(t, "pending"), nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]pendingEntry, len(raw))
	for _, e := range raw {
		pe := pendingEntry{present: true}
		if len(e.Value) > 0 && string(e.Value) != "null" {
			pe.value, pe.hasValue = rawText(e.Value), true
		}
		if len(e.Pending) > 0 && string(e.Pending) != "null" {
			pe.pending, pe.hasPending = rawText(e.Pending), true
		}
		if d := rawText(e.Delete); d != "" && d != "0" {
			pe.deletePending = true
		}
		out[e.Key] = pe
	}
	return out, nil
}

// observeConfig is one fresh read of a config-class receipt's changes.
func (w *waiter) observeConfig(ctx context.Context) (bool, error) {
	entries, err := w.c.readPending(ctx, w.r.Target)
	if err != nil {
		return false, err
	}
	var applied, pending, missing []string
	w.out.Pending = nil
	for _, ch := range w.r.Changes {
		e := entries[ch.Key]
		switch {
		case ch.Delete && e.deletePending:
			pending = append(pending, "delete "+ch.Key)
			w.out.Pending = append(w.out.Pending, ch.Key)
		case ch.Delete && !e.hasValue && !e.hasPending:
			applied = append(applied, "deleted "+ch.Key)
		case ch.Delete:
			missing = append(missing, ch.Key+" still set")
		case e.hasPending && displayValue(ch.Key, e.pending) == ch.New:
			pending = append(pending, ch.Key+"="+ch.New)
			w.out.Pending = append(w.out.Pending, ch.Key)
		case e.hasValue && !e.hasPending && displayValue(ch.Key, e.value) == ch.New:
			applied = append(applied, ch.Key+"="+ch.New)
		default:
			now := "unset"
			if e.hasValue {
				now = displayValue(ch.Key, e.value)
			}
			missing = append(missing, ch.Key+" is "+now)
		}
	}
	var parts []string
	if len(applied) > 0 {
		parts = append(parts, "applied: "+strings.Join(applied, ", "))
	}
	if len(pending) > 0 {
		parts = append(parts, "pending until the guest's next start (not applied yet): "+strings.Join(pending, ", "))
	}
	if len(missing) > 0 {
		parts = append(parts, "not as asked: "+strings.Join(missing, ", "))
	}
	w.out.Observed = strings.Join(parts, "; ")
	return len(missing) == 0, nil
}

// observeResize reads the disk's size back from the config.
func (w *waiter) observeResize(ctx context.Context) (bool, error) {
	cfg, err := w.c.readRawConfig(ctx, w.r.Target)
	if err != nil {
		return false, err
	}
	ok := true
	var parts []string
	for _, ch := range w.r.Changes {
		want, _ := parseSize(ch.New)
		line, has := cfg[ch.Key]
		got, known := diskSizeOf(line)
		switch {
		case !has || !known:
			parts = append(parts, ch.Key+" has no size")
			ok = false
		case got >= want:
			parts = append(parts, ch.Key+" is "+formatSize(got))
		default:
			parts = append(parts, ch.Key+" is still "+formatSize(got))
			ok = false
		}
	}
	w.out.Observed = strings.Join(parts, ", ")
	return ok, nil
}

// readRawConfig reads GET …/config as key → config text (values as
// Proxmox stores them; nothing here leaves the package unredacted).
func (c *Client) readRawConfig(ctx context.Context, t Target) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := c.get(ctx, guestPath(t, "config"), nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = rawText(v)
	}
	return out, nil
}

// diskSizeOf returns the size= of a disk line in bytes.
func diskSizeOf(line string) (uint64, bool) {
	for part := range strings.SplitSeq(line, ",") {
		if v, ok := strings.CutPrefix(part, "size="); ok {
			return parseSize(v)
		}
	}
	return 0, false
}

// parseSize is PVE::JSONSchema::parse_size: digits with an optional
// fraction and K, M, G or T (powers of 1024); the result is whole bytes.
func parseSize(s string) (uint64, bool) {
	if !sizeRe.Regexp().MatchString(s) {
		return 0, false
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'K':
		mult = 1 << 10
	case 'M':
		mult = 1 << 20
	case 'G':
		mult = 1 << 30
	case 'T':
		mult = 1 << 40
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n*mult > 1<<62 {
		return 0, false
	}
	return uint64(n * mult), true
}

// formatSize is PVE::JSONSchema::format_size: the largest unit that
// divides the size exactly ("32G", "1536M", "1025").
func formatSize(n uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatUint(n, 10)
}
