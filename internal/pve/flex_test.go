package pve

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
)

func TestFlexDecoding(t *testing.T) {
	t.Parallel()
	type row struct {
		VMID     Int    `json:"vmid"`
		Template Bool   `json:"template"`
		Load     Float  `json:"load"`
		Lock     String `json:"lock"`
	}
	tests := []struct {
		name string
		in   string
		want row
	}{
		{"numbers", `{"vmid":100,"template":1,"load":0.5,"lock":"backup"}`, row{100, true, 0.5, "backup"}},
		{"pve6 strings", `{"vmid":"100","template":"","load":"0.50","lock":""}`, row{100, false, 0.5, ""}},
		{"nulls", `{"vmid":null,"template":null,"load":null,"lock":null}`, row{}},
		{"json bools", `{"template":true}`, row{Template: true}},
		{"string bool 1", `{"template":"1"}`, row{Template: true}},
		{"float int", `{"vmid":1e3}`, row{VMID: 1000}},
		{"number as string field", `{"lock":42}`, row{Lock: "42"}},
		{"absent", `{}`, row{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got row
			if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
				t.Fatalf("unmarshal %s: %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFlexRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"vmid":"abc"}`, `{"vmid":[1]}`, `{"template":"yes"}`, `{"load":{}}`, `{"lock":{"a":1}}`, `{"vmid":true}`} {
		var v struct {
			VMID     Int    `json:"vmid"`
			Template Bool   `json:"template"`
			Load     Float  `json:"load"`
			Lock     String `json:"lock"`
		}
		if err := json.Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("%s: decoded without error: %+v", in, v)
		}
	}
}

func TestPathEscapesEverySegment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		segs []string
		want string
	}{
		{[]string{"nodes", "pve1", "status"}, "/nodes/pve1/status"},
		{[]string{"nodes", "pve1/../../access", "status"}, "/nodes/pve1%2F..%2F..%2Faccess/status"},
		{[]string{"nodes", "a?b#c", "x y"}, "/nodes/a%3Fb%23c/x%20y"},
		{[]string{"tasks", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"}, "/tasks/UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
	}
	for _, tc := range tests {
		if got := Path(tc.segs...); got != tc.want {
			t.Errorf("Path(%q) = %q, want %q", tc.segs, got, tc.want)
		}
	}
}

// referenceInt is Int's decoding before its digits fast path.
func referenceInt(b []byte) (Int, error) {
	s, ok := unquote(b)
	if !ok {
		return 0, fmt.Errorf("not a scalar")
	}
	if len(s) == 0 {
		return 0, nil
	}
	if v, err := strconv.ParseInt(string(s), 10, 64); err == nil {
		return Int(v), nil
	}
	f, err := strconv.ParseFloat(string(s), 64)
	return Int(f), err
}

// FuzzIntDigits: the digits fast path decodes every integer literal as
// the strconv path does.
func FuzzIntDigits(f *testing.F) {
	for _, s := range []string{"0", "-0", "7", "007", "-12", "123456789012345678", "-123456789012345678", "1234567890123456789",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808", "9999999999999999999", "1.0", "1e3", "-", "", "+1", `"100"`, " 1", "1 ", "null", "0x1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got Int
		err := got.UnmarshalJSON(b)
		want, werr := referenceInt(b)
		if (err == nil) != (werr == nil) || (err == nil && got != want) {
			t.Errorf("%q: got %d (%v), want %d (%v)", b, got, err, want, werr)
		}
	})
}
