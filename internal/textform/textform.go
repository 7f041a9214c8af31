package textform

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Inline arrays of scalars are written on the key's line up to this many
// bytes; a longer one gets a line per element, which a person can read.
const maxInline = 120

// kinds of a decoded JSON value.
const (
	kScalar = iota // number, true, false, null: raw holds the JSON text
	kString
	kObject
	kArray
)

// value is a JSON value decoded with its object keys in order (the
// structured result's field order, which is the order a person reads).
type value struct {
	kind int
	raw  string // kScalar: the JSON text; kString: the string
	keys []string
	vals []*value // kObject: the members' values; kArray: the elements
}

func (v *value) scalar() bool { return v.kind == kScalar || v.kind == kString }

// Options are what the writer knows of the values beyond their JSON.
type Options struct {
	// ByteKeys are the keys whose values are sizes in bytes: a whole
	// number of GiB (or MiB) is written in that unit, the unit in the key,
	// maxmem(GiB): 8 for 8589934592.
	ByteKeys map[string]bool
}

// Append appends the text form of the JSON object js to b. It fails on
// anything but one JSON object.
func Append(b []byte, js []byte, opts Options) ([]byte, error) {
	d := decoder{data: js}
	v, err := d.value(0)
	if err == nil {
		d.space()
		if d.i != len(d.data) {
			err = errors.New("textform: more than one JSON value")
		}
	}
	if err != nil {
		return b, err
	}
	if v.kind != kObject {
		return b, errors.New("textform: not a JSON object")
	}
	w := writer{b: b, opts: opts}
	w.object(nil, v)
	return w.b, nil
}

// maxDepth bounds the nesting decoder reads (encoding/json's own limit
// is 10,000; no result nests beyond a few levels).
const maxDepth = 1000

// decoder reads JSON into values: a result is decoded once more to be
// written as text, so this is a plain recursive descent over the bytes
// (json.Decoder's tokens cost ~70 times the marshal of a guest list).
type decoder struct {
	data []byte
	i    int
	slab []value // values are cut from it, a few allocations for all
	// last holds, by depth, the keys of the last object read there: a
	// list's rows have the same keys, which are then not allocated again.
	last [][]string
}

func (d *decoder) alloc(kind int) *value {
	if len(d.slab) == 0 {
		// A value takes at least 2 bytes of JSON; most take 16 or more.
		d.slab = make([]value, min(256, len(d.data)/16+4))
	}
	v := &d.slab[0]
	d.slab = d.slab[1:]
	v.kind = kind
	return v
}

var errSyntax = errors.New("textform: invalid JSON")

func (d *decoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (*value, error) {
	if depth > maxDepth {
		return nil, errors.New("textform: JSON nested too deeply")
	}
	d.space()
	if d.i >= len(d.data) {
		return nil, errSyntax
	}
	switch c := d.data[d.i]; {
	case c == '{':
		d.i++
		v := d.alloc(kObject)
		d.space()
		if d.i < len(d.data) && d.data[d.i] == '}' {
			d.i++
			return v, nil
		}
		for len(d.last) <= depth {
			d.last = append(d.last, nil)
		}
		if n := len(d.last[depth]); n > 0 {
			v.keys, v.vals = make([]string, 0, n), make([]*value, 0, n)
		}
		for {
			d.space()
			if d.i >= len(d.data) || d.data[d.i] != '"' {
				return nil, errSyntax
			}
			k, err := d.key(depth, len(v.keys))
			if err != nil {
				return nil, err
			}
			d.space()
			if d.i >= len(d.data) || d.data[d.i] != ':' {
				return nil, errSyntax
			}
			d.i++
			m, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.keys = append(v.keys, k)
			v.vals = append(v.vals, m)
			if end, err := d.next('}'); err != nil || end {
				d.last[depth] = v.keys
				return v, err
			}
		}
	case c == '[':
		d.i++
		v := d.alloc(kArray)
		d.space()
		if d.i < len(d.data) && d.data[d.i] == ']' {
			d.i++
			return v, nil
		}
		for {
			e, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, e)
			if end, err := d.next(']'); err != nil || end {
				return v, err
			}
		}
	case c == '"':
		s, err := d.str()
		v := d.alloc(kString)
		v.raw = s
		return v, err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(d.data[d.i:], []byte(lit)) {
				d.i += len(lit)
				v := d.alloc(kScalar)
				v.raw = lit
				return v, nil
			}
		}
		return nil, errSyntax
	default:
		start := d.i
		for d.i < len(d.data) && strings.IndexByte("+-.0123456789eE", d.data[d.i]) >= 0 {
			d.i++
		}
		raw := string(d.data[start:d.i])
		if !isNumber(raw) {
			return nil, errSyntax
		}
		v := d.alloc(kScalar)
		v.raw = raw
		return v, nil
	}
}

// next reads the comma or the closing delimiter after a member or element.
func (d *decoder) next(closing byte) (end bool, err error) {
	d.space()
	if d.i >= len(d.data) {
		return false, errSyntax
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		return false, nil
	case closing:
		d.i++
		return true, nil
	}
	return false, errSyntax
}

// key reads the n-th key of an object at depth, the string of the last
// object there when it is the same.
func (d *decoder) key(depth, n int) (string, error) {
	raw, plain, err := d.scanStr()
	if err != nil {
		return "", err
	}
	if plain && depth < len(d.last) && n < len(d.last[depth]) {
		if prev := d.last[depth][n]; prev == string(raw[1:len(raw)-1]) {
			return prev, nil
		}
	}
	return unquote(raw, plain)
}

// str reads the JSON string at d.i.
func (d *decoder) str() (string, error) {
	raw, plain, err := d.scanStr()
	if err != nil {
		return "", err
	}
	return unquote(raw, plain)
}

// scanStr reads past the JSON string at d.i and returns it with its
// quotes; plain when it has no escape and only ASCII.
func (d *decoder) scanStr() (raw []byte, plain bool, err error) {
	start := d.i
	plain = true
	for d.i++; d.i < len(d.data); d.i++ {
		switch c := d.data[d.i]; {
		case c == '\\':
			plain = false
			d.i++
		case c == '"':
			d.i++
			return d.data[start:d.i], plain, nil
		case c < 0x20:
			return nil, false, errSyntax
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return nil, false, errSyntax
}

// unquote decodes a JSON string; one with an escape or a byte that is not
// plain ASCII by encoding/json, which replaces invalid UTF-8 as the
// decoding the text must equal does.
func unquote(raw []byte, plain bool) (string, error) {
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errSyntax
	}
	return s, nil
}

type writer struct {
	b    []byte
	opts Options
}

// object writes o's members, each key prefixed by path.
func (w *writer) object(path []byte, o *value) {
	for i, k := range o.keys {
		p := appendKey(append([]byte(nil), path...), k, len(path) > 0)
		w.member(p, k, o.vals[i])
	}
}

func (w *writer) member(p []byte, k string, v *value) {
	switch {
	case w.opts.ByteKeys[k] && byteUnit([]*value{v}) != "":
		u := byteUnit([]*value{v})
		w.b = append(w.b, p...)
		w.b = append(w.b, '(')
		w.b = append(w.b, u...)
		w.b = append(w.b, "): "...)
		w.b = appendCell(w.b, v, u)
		w.b = append(w.b, '\n')
	case v.kind == kObject && len(v.keys) > 0:
		w.object(p, v)
	case v.kind == kArray && len(v.vals) > 0:
		w.array(p, v)
	default:
		w.b = append(w.b, p...)
		w.b = append(w.b, ": "...)
		w.b = appendValue(w.b, v, false)
		w.b = append(w.b, '\n')
	}
}

func (w *writer) array(p []byte, a *value) {
	head := func() {
		w.b = append(w.b, p...)
		w.b = append(w.b, '[')
		w.b = strconv.AppendInt(w.b, int64(len(a.vals)), 10)
		w.b = append(w.b, ']')
	}
	allScalar, allObjects := true, true
	for _, e := range a.vals {
		allScalar = allScalar && e.scalar()
		allObjects = allObjects && e.kind == kObject
	}
	switch {
	case allScalar:
		inline, n := true, 0
		for _, e := range a.vals {
			n += len(e.raw) + 1
			if e.kind == kString && !bare(e.raw, true) {
				inline = false
			}
		}
		head()
		w.b = append(w.b, ':')
		if inline && n <= maxInline {
			w.b = append(w.b, ' ')
			w.b = appendList(w.b, a)
			w.b = append(w.b, '\n')
			return
		}
		w.b = append(w.b, '\n')
		for _, e := range a.vals {
			w.b = appendValue(w.b, e, false)
			w.b = append(w.b, '\n')
		}
		return
	case allObjects:
		cols := w.columns(a.vals, nil)
		if len(cols) == 0 || len(cols) == 1 && anyAbsent(a.vals, cols[0]) {
			break // no header to write, or a row would be an empty line
		}
		head()
		w.b = append(w.b, '{')
		for i, c := range cols {
			if i > 0 {
				w.b = append(w.b, '\t')
			}
			for j, k := range c.path {
				w.b = appendKey(w.b, k, j > 0)
			}
			if c.list {
				w.b = append(w.b, "[]"...)
			}
			if c.unit != "" {
				w.b = append(w.b, '(')
				w.b = append(w.b, c.unit...)
				w.b = append(w.b, ')')
			}
		}
		w.b = append(w.b, "}:\n"...)
		for _, row := range a.vals {
			for i, c := range cols {
				if i > 0 {
					w.b = append(w.b, '\t')
				}
				if v := c.get(row); v != nil {
					// [null] as a list would read as the cell null.
					if c.list && v.kind == kArray && len(v.vals) > 0 && !(len(v.vals) == 1 && v.vals[0].raw == "null" && v.vals[0].kind == kScalar) {
						w.b = appendList(w.b, v)
					} else {
						w.b = appendCell(w.b, v, c.unit)
					}
				}
			}
			w.b = append(w.b, '\n')
		}
		return
	}
	w.b = append(w.b, p...)
	w.b = append(w.b, ": "...)
	w.b = appendJSON(w.b, a)
	w.b = append(w.b, '\n')
}

// column is one column of a table: the path of keys to its cell.
type column struct {
	path []string
	list bool // every present value is an array of scalars (or null)
	// unit is "GiB" or "MiB" for a byte size column that is whole in it,
	// "y/n" for a column of booleans (y true, n false), or "".
	unit string
}

// units the cells of a column or a key's value can be written in.
const (
	unitGiB  = "GiB"
	unitMiB  = "MiB"
	unitBool = "y/n"
)

// byteUnit returns the largest of GiB and MiB that every value (a
// non-negative whole number) is a multiple of, or "".
func byteUnit(vals []*value) string {
	gib := true
	for _, v := range vals {
		n, ok := whole(v)
		if !ok || n%(1<<20) != 0 {
			return ""
		}
		gib = gib && n%(1<<30) == 0
	}
	if gib {
		return unitGiB
	}
	return unitMiB
}

// whole returns v as a non-negative whole number written in digits only.
func whole(v *value) (uint64, bool) {
	if v.kind != kScalar || v.raw == "" || v.raw[0] < '0' || v.raw[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(v.raw, 10, 64)
	return n, err == nil
}

// appendCell appends v written in unit.
func appendCell(b []byte, v *value, unit string) []byte {
	switch unit {
	case unitGiB:
		n, _ := whole(v)
		return strconv.AppendUint(b, n>>30, 10)
	case unitMiB:
		n, _ := whole(v)
		return strconv.AppendUint(b, n>>20, 10)
	case unitBool:
		if v.raw == "true" {
			return append(b, 'y')
		}
		return append(b, 'n')
	}
	return appendValue(b, v, false)
}

// get returns row's value at the column's path, nil when absent.
func (c column) get(row *value) *value {
	v := row
	for _, k := range c.path {
		if v.kind != kObject {
			return nil
		}
		v = v.member(k)
		if v == nil {
			return nil
		}
	}
	return v
}

func (v *value) member(k string) *value {
	for i, key := range v.keys {
		if key == k {
			return v.vals[i]
		}
	}
	return nil
}

// columns returns the columns of rows (objects), keys in first-seen order;
// a key whose every present value is a non-empty object becomes that
// object's columns (an absent object then has every such cell empty, and a
// present one at least one cell filled, so the two stay apart).
func (w *writer) columns(rows []*value, prefix []string) []column {
	var order []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, k := range r.keys {
			if !seen[k] {
				seen[k] = true
				order = append(order, k)
			}
		}
	}
	var cols []column
	for _, k := range order {
		path := append(append([]string(nil), prefix...), k)
		var present []*value
		nested, list, bools := true, true, true
		for _, r := range rows {
			v := r.member(k)
			if v == nil {
				continue
			}
			present = append(present, v)
			nested = nested && v.kind == kObject && len(v.keys) > 0
			list = list && (v.kind == kArray && scalars(v) || v.kind == kScalar && v.raw == "null")
			bools = bools && v.kind == kScalar && (v.raw == "true" || v.raw == "false")
		}
		c := column{path: path, list: list}
		switch {
		case nested:
			cols = append(cols, w.columns(present, path)...)
			continue
		case bools:
			c.unit = unitBool
		case w.opts.ByteKeys[k]:
			c.unit = byteUnit(present)
		}
		cols = append(cols, c)
	}
	return cols
}

func anyAbsent(rows []*value, c column) bool {
	for _, r := range rows {
		if c.get(r) == nil {
			return true
		}
	}
	return false
}

func scalars(a *value) bool {
	for _, e := range a.vals {
		if !e.scalar() {
			return false
		}
	}
	return true
}

// appendList appends a non-empty array of scalars as a,b,c.
func appendList(b []byte, a *value) []byte {
	for i, e := range a.vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendValue(b, e, true)
	}
	return b
}

// appendValue appends v as a cell or after "key: ": inList, a string with
// a comma is quoted.
func appendValue(b []byte, v *value, inList bool) []byte {
	switch v.kind {
	case kScalar:
		return append(b, v.raw...)
	case kString:
		if bare(v.raw, inList) {
			return append(b, v.raw...)
		}
		return appendQuoted(b, v.raw)
	}
	return appendJSON(b, v)
}

// appendJSON appends v as compact JSON, its strings quoted as appendQuoted
// does (so no raw control character, whatever the value).
func appendJSON(b []byte, v *value) []byte {
	switch v.kind {
	case kScalar:
		return append(b, v.raw...)
	case kString:
		return appendQuoted(b, v.raw)
	case kObject:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendQuoted(b, k)
			b = append(b, ':')
			b = appendJSON(b, v.vals[i])
		}
		return append(b, '}')
	}
	b = append(b, '[')
	for i, e := range v.vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSON(b, e)
	}
	return append(b, ']')
}

// appendKey appends one key of a path, after a dot unless first.
func appendKey(b []byte, k string, dot bool) []byte {
	if dot {
		b = append(b, '.')
	}
	if bareKey(k) {
		return append(b, k...)
	}
	return appendQuoted(b, k)
}

func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// bare reports whether s can be written without quotes: it cannot be read
// as anything but this string, and holds nothing that ends a line or a cell.
func bare(s string, inList bool) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || s[0] == '"' || s[0] == '[' || s[0] == '{' {
		return false
	}
	switch s {
	case "true", "false", "null":
		return false
	}
	if isNumber(s) {
		return false
	}
	for _, r := range s {
		if escaped(r) || inList && r == ',' {
			return false
		}
	}
	return true
}

// escaped reports whether r is written as \uXXXX in a quoted string (and so
// makes a string need quotes): controls, DEL, C1 controls, the Unicode line
// and paragraph separators, and an invalid byte.
func escaped(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029 || r == utf8.RuneError
}

// appendQuoted appends s as a JSON string.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\r':
			b = append(b, '\\', 'r')
		case escaped(r):
			b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// isNumber reports whether s is a JSON number.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
