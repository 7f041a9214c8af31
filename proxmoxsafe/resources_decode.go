package proxmoxsafe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// vmResources reads the guests of /cluster/resources (type=vm), the one
// list that grows with the cluster (3 MB of JSON for 10,000 guests), with
// decodeResources; whatever it declines is decoded by encoding/json as
// before, so results and errors are the same either way.
//
// Both paths refuse a list of more than maxResourceRows rows before
// allocating them (see resourceRows).
func (c *Client) vmResources(ctx context.Context) ([]rawResource, error) {
	var raw resourceRows
	err := c.get(ctx, "/cluster/resources", url.Values{"type": {"vm"}}, &pve.Decoder{Data: &raw, Decode: func(body []byte) bool {
		rows, ok := decodeResources(body)
		if ok {
			raw = rows
		}
		return ok
	}})
	if err != nil {
		return nil, err
	}
	return raw, nil
}

// maxResourceRows bounds the rows of a /cluster/resources answer. The
// body is already bounded (pve.DefaultMaxBody, 16 MiB), but not what it
// decodes into: `{"data":[{},{},…]}` is 3 bytes a row, so 16 MiB made
// about 5.6 million rows (over 1 GB) on either decoder path. A Proxmox
// cluster has at most a few dozen nodes (corosync), and a VMID list of
// 10,000 guests is already far beyond real ones (it is what the
// benchmarks use); 200,000 rows, 20 times that, leaves every real
// cluster room while the worst case stays at tens of MB.
const maxResourceRows = 200_000

// errTooManyRows is the refusal of a resource list over maxResourceRows.
var errTooManyRows = fmt.Errorf("the cluster resource list has more than %d entries, far more than any real Proxmox cluster; it was not decoded (a broken or hostile answer)", maxResourceRows)

// resourceRows is the encoding/json side of vmResources.
type resourceRows = cappedRows[rawResource]

// cappedRows is a /cluster/resources list decoded by encoding/json (the
// guest list's fallback, and the node, storage and unfiltered reads): it
// counts the array's elements (encoding/json has already validated the
// text) and refuses more than maxResourceRows before decoding any.
type cappedRows[T any] []T

// UnmarshalJSON decodes data as []T, refusing more than maxResourceRows
// elements first.
func (r *cappedRows[T]) UnmarshalJSON(data []byte) error {
	more, counted := moreRowsThan(data, maxResourceRows)
	if more {
		return errTooManyRows
	}
	if !counted {
		// encoding/json keeps decoding the rows after a type error, so
		// an uncounted list would be allocated in full all the same.
		return errRowsTooDeep
	}
	return json.Unmarshal(data, (*[]T)(r))
}

// errRowsTooDeep is the refusal of a resource list whose rows could not
// be counted: encoding/json has validated the text, so the scanner can
// only have stopped at a value nested deeper than pve.MaxScanDepth, which
// no Proxmox answer has (its rows are flat objects).
var errRowsTooDeep = fmt.Errorf("the cluster resource list holds a value nested deeper than %d levels, which no real Proxmox answer has; it was not decoded (a broken or hostile answer)", pve.MaxScanDepth)

// moreRowsThan reports whether data, a JSON array, has more than limit
// elements; it skips them without building anything. Anything but an
// array (null, or a type error encoding/json reports) has no rows to
// count. counted is false when the scanner stopped inside the array (on
// text encoding/json validated, only at a value nested too deeply).
func moreRowsThan(data []byte, limit int) (more, counted bool) {
	s := pve.NewScanner(data)
	if !s.Consume('[') || s.Consume(']') {
		return false, true
	}
	for n := 1; ; n++ {
		if n > limit {
			return true, true
		}
		if _, ok := s.Value(); !ok {
			return false, false
		}
		if !s.Consume(',') {
			return false, true
		}
	}
}

// decodeResources decodes a /cluster/resources answer into the rows
// encoding/json would give for {"data": []rawResource}, reading only the
// fields a row has and skipping the others (id, netin, diskread, …)
// without building them, in one pass that also validates the whole body.
// It declines (false) what it does not handle exactly as encoding/json
// would, and the caller then decodes with encoding/json: invalid JSON, a
// missing, null or repeated "data", an element that is not an object, a
// field of an unexpected type, and keys that are escaped, not ASCII or a
// known name in another case (encoding/json matches names without regard
// to case). Differential tests and FuzzDecodeResources hold it to
// encoding/json's result.
func decodeResources(body []byte) ([]rawResource, bool) {
	// Every row starts with '{': with no more of them than
	// maxResourceRows, the rows cannot exceed it. A body with more is left
	// to encoding/json, whose resourceRows counts the rows exactly and
	// refuses too many before allocating them.
	braces := bytes.Count(body, []byte("{"))
	if braces > maxResourceRows {
		return nil, false
	}
	var rows []rawResource
	ok := decodeData(body, func(s *pve.Scanner) bool {
		var ok bool
		rows, ok = decodeRows(s, expectedRows(braces, len(body)))
		return ok
	})
	if !ok {
		return nil, false
	}
	return rows, true
}

// decodeData scans body as encoding/json decodes it into a struct with
// one field, Data `json:"data"`, handing the value of "data" to data
// and skipping every other member. It declines what encoding/json would
// decode otherwise: a body that is not one object, a missing or repeated
// "data", or "data" spelled in another case (encoding/json matches it).
func decodeData(body []byte, data func(*pve.Scanner) bool) bool {
	s := pve.NewScanner(body)
	if !s.Consume('{') {
		return false
	}
	seen := false
	ok := decodeMembers(s, func(key []byte) bool {
		switch {
		case string(key) == "data":
			if seen {
				return false
			}
			seen = true
			return data(s)
		case asciiEqualFold(key, "data"):
			return false
		}
		_, ok := s.Value()
		return ok
	})
	return ok && seen && s.End()
}

// decodeMembers scans an object's members after its '{' through its '}',
// handing each key to member, which scans the value; false from member,
// or a key objectKey declines, declines the object.
func decodeMembers(s *pve.Scanner, member func(key []byte) bool) bool {
	if s.Consume('}') {
		return true
	}
	for {
		key, ok := objectKey(s)
		if !ok || !member(key) {
			return false
		}
		if s.Consume('}') {
			return true
		}
		if !s.Consume(',') {
			return false
		}
	}
}

// objectKey scans a key and its colon and returns the key's text; it
// declines keys with escapes or bytes outside ASCII, whose matching
// against field names encoding/json does in its own way.
func objectKey(s *pve.Scanner) ([]byte, bool) {
	lit, escaped, ok := s.String()
	if !ok || escaped || !s.Consume(':') {
		return nil, false
	}
	key := lit[1 : len(lit)-1]
	for _, c := range key {
		if c >= 0x80 {
			return nil, false
		}
	}
	return key, true
}

func asciiEqualFold(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// foldsToAny reports whether key is one of names in another case: a key
// encoding/json would decode into that field, which the decoders decline.
func foldsToAny(key []byte, names []string) bool {
	for _, name := range names {
		if asciiEqualFold(key, name) {
			return true
		}
	}
	return false
}

// resourceFields are the keys of rawResource (its json tags).
var resourceFields = []string{"type", "vmid", "name", "node", "status", "template", "lock", "tags",
	"hastate", "cpu", "maxcpu", "mem", "maxmem", "disk", "maxdisk", "uptime", "pool"}

// maxInterned bounds the strings shared between rows (node names and
// states repeat on every row; names do not).
const maxInterned = 256

// expectedRows guesses how many rows a body of size bytes holding braces
// '{' has, to allocate them once (a row is ~200 bytes: growing the slice
// from nothing copied 10,000 of them several times over): one per '{',
// but never more than one per 64 bytes of body, so that braces in strings
// or nested objects cannot make it allocate much more than the body's
// size (a real guest row is ~300 bytes of JSON).
func expectedRows(braces, size int) int {
	return min(braces, size/64)
}

// decodeRows decodes the "data" array; about is the number of rows
// expected.
func decodeRows(s *pve.Scanner, about int) ([]rawResource, bool) {
	if !s.Consume('[') {
		return nil, false
	}
	rows := make([]rawResource, 0, about)
	if s.Consume(']') {
		return rows, true
	}
	interned := map[string]string{}
	for {
		if !s.Consume('{') {
			return nil, false
		}
		rows = append(rows, rawResource{})
		if !decodeRow(s, &rows[len(rows)-1], interned) {
			return nil, false
		}
		if s.Consume(']') {
			return rows, true
		}
		if !s.Consume(',') {
			return nil, false
		}
	}
}

// decodeRow decodes one object after its '{' into r.
func decodeRow(s *pve.Scanner, r *rawResource, interned map[string]string) bool {
	return decodeMembers(s, func(key []byte) bool {
		v, ok := s.Value()
		if !ok {
			return false
		}
		var err error
		switch string(key) {
		case "type":
			ok = decodePlainString(v, &r.Type, interned)
		case "vmid":
			err = r.VMID.UnmarshalJSON(v)
		case "name":
			err = r.Name.UnmarshalJSON(v)
		case "node":
			err = decodeShared(v, &r.Node, interned)
		case "status":
			err = decodeShared(v, &r.Status, interned)
		case "template":
			err = r.Template.UnmarshalJSON(v)
		case "lock":
			err = r.Lock.UnmarshalJSON(v)
		case "tags":
			err = r.Tags.UnmarshalJSON(v)
		case "hastate":
			err = decodeShared(v, &r.HAState, interned)
		case "cpu":
			err = r.CPU.UnmarshalJSON(v)
		case "maxcpu":
			err = r.MaxCPU.UnmarshalJSON(v)
		case "mem":
			err = r.Mem.UnmarshalJSON(v)
		case "maxmem":
			err = r.MaxMem.UnmarshalJSON(v)
		case "disk":
			err = r.Disk.UnmarshalJSON(v)
		case "maxdisk":
			err = r.MaxDisk.UnmarshalJSON(v)
		case "uptime":
			err = r.Uptime.UnmarshalJSON(v)
		case "pool":
			err = r.Pool.UnmarshalJSON(v)
		default:
			if foldsToAny(key, resourceFields) {
				return false
			}
		}
		return ok && err == nil
	})
}

// decodePlainString decodes v into a plain string field as encoding/json
// does: a string sets it, null leaves it as it was, anything else is a
// type error (declined).
func decodePlainString(v []byte, dst *string, interned map[string]string) bool {
	switch v[0] {
	case 'n':
		return true
	case '"':
	default:
		return false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c >= 0x80 || c == '\\' {
			// encoding/json replaces invalid UTF-8 and unescapes: let it.
			return json.Unmarshal(v, dst) == nil
		}
	}
	*dst = intern(inner, interned)
	return true
}

// decodeShared is pve.String's decoding, sharing the text of plain string
// literals between rows.
func decodeShared(v []byte, dst *pve.String, interned map[string]string) error {
	if v[0] == '"' {
		inner := v[1 : len(v)-1]
		plain := true
		for _, c := range inner {
			if c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			*dst = pve.String(intern(inner, interned))
			return nil
		}
	}
	return dst.UnmarshalJSON(v)
}

func intern(b []byte, interned map[string]string) string {
	if s, ok := interned[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(interned) < maxInterned && len(s) <= 64 {
		interned[s] = s
	}
	return s
}
