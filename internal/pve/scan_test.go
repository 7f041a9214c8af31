package pve

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// scanWhole reports whether s scans data as exactly one value.
func scanWhole(data []byte) ([]byte, bool) {
	s := NewScanner(data)
	v, ok := s.Value()
	return v, ok && s.End()
}

var scanCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-1E-2`, `true`, `false`, `null`, ` {"a" : [1, 2.0, "x", {"b": null}] } `,
	`"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE80"`, "\"\xff\xfe invalid UTF-8 is let through\"", `"é"`,
	`{"a":1,"a":2}`, "\t\r\n[\t1\r,\n2 ]\n",
	// invalid
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{'a':1}`, `01`, `-`, `1.`, `.5`, `+1`, `1e`, `1e+`, `0x10`,
	`tru`, `nul`, `True`, `NaN`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x00b\"", "\"a\x1fb\"", `[1 2]`, `{} {}`, `1 2`,
	"[1]\x00", `[` + strings.Repeat("[", 300) + strings.Repeat("]", 301),
}

func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range scanCases {
		checkScan(t, []byte(in))
	}
}

// checkScan: the Scanner accepts exactly what json.Valid accepts (up to
// MaxScanDepth), and hands out what encoding/json would give a
// json.RawMessage.
func checkScan(t *testing.T, data []byte) {
	t.Helper()
	v, ok := scanWhole(data)
	valid := json.Valid(data)
	if ok && !valid {
		t.Errorf("scanner accepts %q, which encoding/json refuses", data)
	}
	if !ok && valid && len(data) <= MaxScanDepth {
		t.Errorf("scanner refuses %q, which encoding/json accepts", data)
	}
	if ok {
		var raw json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil || !bytes.Equal(raw, v) {
			t.Errorf("value of %q = %q, encoding/json's %q (%v)", data, v, raw, err)
		}
	}
}

func TestScannerDepthBound(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{MaxScanDepth, MaxScanDepth + 1} {
		in := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		if _, ok := scanWhole(in); ok != (depth <= MaxScanDepth) {
			t.Errorf("depth %d: ok = %v", depth, ok)
		}
	}
}

func FuzzScanner(f *testing.F) {
	for _, in := range scanCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data) })
}
