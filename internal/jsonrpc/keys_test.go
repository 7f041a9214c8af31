package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestRepeatedKey: a key repeated in one object is found at any depth,
// with its path, however it is escaped; the same key in different objects,
// and keys or braces inside string values, are not repeats.
func TestRepeatedKey(t *testing.T) {
	t.Parallel()
	many := func(dupAt int) string { // an object of 40 keys, k<dupAt> repeated at the end
		var b strings.Builder
		b.WriteString("{")
		for i := range 40 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		fmt.Fprintf(&b, `"k%d":0}`, dupAt)
		return b.String()
	}
	for _, tc := range []struct {
		in, want string // want "": no repeated key
	}{
		{`{}`, ""},
		{`{"vmid":100,"node":"pve1"}`, ""},
		{`{"vmid":100,"vmid":101}`, "vmid"},
		{`{"vmid":100,"vm\u0069d":101}`, "vmid"},
		{`{"vm\u0069d":100,"vmid":101}`, "vmid"},
		{` { "vmid" : 100 , "node":"a" , "vmid" : 101 } `, "vmid"},
		{`{"params":{"a":"1","b":"2","a":"3"}}`, "params.a"},
		{`{"params":{"a":"1"},"other":{"a":"1"}}`, ""},
		{`{"a":{"x":1},"b":{"x":1},"a":2}`, "a"},
		{`{"disks":[{"size":"1G"},{"size":"2G","size":"3G"}]}`, "disks[1].size"},
		{`{"l":[[1,2],[{"k":1,"k":2}]]}`, "l[1][0].k"},
		{`{"s":"{\"a\":1,\"a\":2}","t":"a"}`, ""},
		{`{"s":"a\"b","s\"":1}`, ""},
		{`{"\u00e9":1,"é":2}`, "é"},
		{`{"a\\":1,"a\\":2}`, `a\`},
		{"{\"a\xff\":1,\"a\xfe\":2}", "a\ufffd"}, // encoding/json reads both as a U+FFFD
		{many(3), "k3"},
		{many(39), "k39"},
		{many(40), ""},
		{`{"a":1,"a"`, "a"}, // the repeat comes before the syntax error
		{`{"a":1,`, ""},
		{`not json`, ""},
		{`{"a":"unterminated`, ""},
	} {
		path, found := RepeatedKey([]byte(tc.in), false)
		if found != (tc.want != "") || path != tc.want {
			t.Errorf("RepeatedKey(%q) = %q, %v; want %q", tc.in, path, found, tc.want)
		}
	}
}

// FuzzRepeatedKey checks RepeatedKey against encoding/json's own reading of
// the object keys (a token decoder) on every valid JSON value.
func FuzzRepeatedKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `{"a\u0041":1,"aA":2}`, `[{"x":1},{"x":1}]`, `{"k":"\"","k\\":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		want := referenceRepeated(t, raw)
		if _, got := RepeatedKey(raw, false); got != want {
			t.Errorf("RepeatedKey(%q) found %v, encoding/json's keys say %v", raw, got, want)
		}
	})
}

// referenceRepeated reads raw with encoding/json's token decoder and
// reports whether an object repeats a key.
func referenceRepeated(t *testing.T, raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		object    bool
		keys      map[string]bool
		expectKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.object {
					top.expectKey = true
				}
				stack = append(stack, &frame{object: v == '{', keys: map[string]bool{}, expectKey: v == '{'})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expectKey = true
				}
			}
		case string:
			if top != nil && top.object && top.expectKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.expectKey = false
				continue
			}
			if top != nil && top.object {
				top.expectKey = true
			}
		default:
			if top != nil && top.object {
				top.expectKey = true
			}
		}
	}
}

// TestRepeatedKeySkipArguments: with skipArguments, a request's
// params.arguments is left to the adapter, and every other repeat is
// still found: in params, at the top, in arguments of another method's
// params shape, and in a nested "arguments" that is not params'.
func TestRepeatedKeySkipArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":1,"a":2}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1,"a":2},"name":"t","name":"u"}}`, "params.name"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":1},"arguments":{"a":2}}}`, "params.arguments"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, "method"},
		{`{"jsonrpc":"2.0","id":1,"params":{"arguments":[{"a":1,"a":2}]},"id":2}`, "id"},
		{`{"params":{"arguments":"x","k":1,"k":2}}`, "params.k"},
		{`{"params":{"arguments":5,"k":1,"k":2}}`, "params.k"},
		{`{"params":{"x":{"arguments":{"a":1,"a":2}}}}`, "params.x.arguments.a"},
		{`{"other":{"arguments":{"a":1,"a":2}}}`, "other.arguments.a"},
		{`{"params":{"arguments":{"a":{"b":1,"b":2}}},"params":1}`, "params"},
	} {
		path, found := RepeatedKey([]byte(tc.in), true)
		if found != (tc.want != "") || path != tc.want {
			t.Errorf("RepeatedKey(%q, true) = %q, %v; want %q", tc.in, path, found, tc.want)
		}
	}
}
