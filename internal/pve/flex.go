package pve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Proxmox's JSON is loosely typed: older versions send vmid as a string,
// booleans as 0/1 or "", numbers as strings in node status. These types
// decode any of those forms and never fail on an empty string or null.

// Int decodes a JSON number, a numeric string, "", or null.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	if v, ok := digits(b); ok {
		*n = Int(v)
		return nil
	}
	s, ok := unquote(b)
	if !ok {
		return fmt.Errorf("pve: cannot decode %.40s as integer", b)
	}
	if len(s) == 0 {
		*n = 0
		return nil
	}
	// string(s) in a call does not escape: no allocation for a number.
	if v, err := strconv.ParseInt(string(s), 10, 64); err == nil {
		*n = Int(v)
		return nil
	}
	// Integers sometimes arrive as 1.0 or 1e3 from float formatting.
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return fmt.Errorf("pve: cannot decode %.40q as integer", s)
	}
	*n = Int(f)
	return nil
}

// digits parses the common case, a plain integer literal of up to 18
// digits (no overflow possible), as strconv.ParseInt would.
func digits(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// Float decodes a JSON number, a numeric string, "", or null.
type Float float64

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	s, ok := unquote(b)
	if !ok {
		return fmt.Errorf("pve: cannot decode %.40s as number", b)
	}
	if len(s) == 0 {
		*f = 0
		return nil
	}
	v, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return fmt.Errorf("pve: cannot decode %.40q as number", s)
	}
	*f = Float(v)
	return nil
}

// Bool decodes true/false, 0/1, "0"/"1", "", or null.
type Bool bool

// UnmarshalJSON implements json.Unmarshaler.
func (v *Bool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch string(b) {
	case "true":
		*v = true
		return nil
	case "false", "null":
		*v = false
		return nil
	}
	s, ok := unquote(b)
	if !ok {
		return fmt.Errorf("pve: cannot decode %.40s as boolean", b)
	}
	switch string(s) {
	case "", "0":
		*v = false
	default:
		n, err := strconv.ParseFloat(string(s), 64)
		if err != nil {
			return fmt.Errorf("pve: cannot decode %.40q as boolean", s)
		}
		*v = n != 0
	}
	return nil
}

// String decodes a JSON string, number, boolean or null into text.
type String string

// UnmarshalJSON implements json.Unmarshaler.
func (v *String) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		s, err := jsonString(b)
		if err != nil {
			return err
		}
		*v = String(s)
		return nil
	}
	if string(b) == "null" {
		*v = ""
		return nil
	}
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return fmt.Errorf("pve: cannot decode %.40s as string", b)
	}
	*v = String(b)
	return nil
}

// unquote returns the text of a JSON scalar: the contents of a string, or
// the literal of a number; null gives "". It copies only an escaped string.
func unquote(b []byte) ([]byte, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, false
	}
	switch b[0] {
	case '"':
		if len(b) >= 2 && b[len(b)-1] == '"' && plain(b[1:len(b)-1]) {
			return b[1 : len(b)-1], true
		}
		s, err := jsonString(b)
		return []byte(s), err == nil
	case 'n':
		return nil, string(b) == "null"
	case '{', '[', 't', 'f':
		return nil, false
	}
	return b, true
}

// plain reports whether the inside of a string literal needs no unescaping.
func plain(b []byte) bool {
	return bytes.IndexByte(b, '\\') < 0 && bytes.IndexByte(b, '"') < 0
}

// jsonString decodes a JSON string literal. Most of Proxmox's strings have no
// escapes, so they are sliced directly; only escaped ones go through
// encoding/json. The decoder already validated the literal.
func jsonString(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && plain(b[1:len(b)-1]) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}
