package textform

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeJSON is what the round trip must give back: encoding/json's
// decoding with UseNumber.
func decodeJSON(tb testing.TB, js string) map[string]any {
	tb.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		tb.Fatalf("bad test JSON %s: %v", js, err)
	}
	return m
}

// roundTrip renders js and parses it back, failing unless the two agree.
func roundTrip(tb testing.TB, js string) string {
	tb.Helper()
	out, err := Append(nil, []byte(js), testOptions)
	if err != nil {
		tb.Fatalf("Append(%s): %v", js, err)
	}
	got, err := Parse(string(out))
	if err != nil {
		tb.Fatalf("Parse of %s:\n%s\n%v", js, out, err)
	}
	if want := decodeJSON(tb, js); !reflect.DeepEqual(got, want) {
		tb.Fatalf("round trip of %s\ntext:\n%s\ngot  %#v\nwant %#v", js, out, got, want)
	}
	return string(out)
}

var corpus = []string{
	`{}`,
	`{"a":1,"b":"x","c":true,"d":null,"e":false,"f":-1.5e10,"g":0}`,
	`{"s":"","t":" lead","u":"trail ","v":"1","w":"true","x":"null","y":"-0.5","z":"1e3"}`,
	`{"q":"\"quoted","br":"[x","cu":"{x","tab":"a\tb","nl":"a\nb","cr":"a\rb","del":"a\u007fb","c1":"a\u0085b","ls":"a\u2028b","ps":"a\u2029b","bs":"a\\b","ff":"\ufffd"}`,
	`{"obj":{},"arr":[],"nested":{"a":{"b":{"c":1}},"d":[]}}`,
	`{"tags":["a","b"],"one":["x"],"mixed":[1,"a",true,null],"commas":["a,b","c"],"long":["` + strings.Repeat("x", 200) + `"],"spaces":["a b"]}`,
	`{"arrs":[[1,2],[]],"objs_and_scalars":[{"a":1},2],"empty_objs":[{},{}]}`,
	`{"rows":[{"a":1,"b":"x"},{"b":"y","c":[1,2]},{}]}`,
	`{"rows":[{"u":{"cpu":0.5,"mem":{"used":1}}},{"u":{"cpu":0.1}},{"v":1}]}`,
	`{"rows":[{"u":{}},{"u":{"a":1}}]}`,
	`{"rows":[{"u":1},{"u":{"a":1}}]}`,
	`{"rows":[{"t":["a"]},{"t":[]},{"t":null},{"t":["a,b","\t"]},{}]}`,
	`{"rows":[{"t":[["x"]]},{"t":["a"]}]}`,
	`{"rows":[{"x":"a\tb","y":"c\nd\te"},{"x":"\n"}]}`,
	`{"a.b":1,"a":{"b":2},"c:d":"x","":"empty key","t\tk":1,"ü":2}`,
	`{"rows":[{"a.b":1,"a":{"b":2},"":3,"k\n":4}]}`,
	`{"lines":["one","two, three","\"four\""]}`,
	`{"data":{"x":[{"y":[{"z":1}]}]}}`,
	`{"n":[1.0,2e-7,-0]}`,
	`{"one_col":[{"a":1},{}],"one_nested":[{"a":{"b":1}},{"c":{}}]}`,
	`{"mem":1073741824,"maxmem":[1073741824],"rows":[{"mem":1073741824,"b":true,"c":[true]},{"mem":null,"b":null}]}`,
}

func TestRoundTrip(t *testing.T) {
	for _, js := range corpus {
		roundTrip(t, js)
	}
}

// TestNoForgedLines: whatever a string holds, it cannot add a line, a row
// or a cell: a table of n rows is n+1 lines (header, rows) and each
// row has as many cells as the header.
func TestNoForgedLines(t *testing.T) {
	for _, js := range corpus {
		if out := roundTrip(t, js); strings.Contains(out, "\n\n") || strings.HasPrefix(out, "\n") {
			t.Errorf("%s: an empty line in\n%s", js, out)
		}
	}
	evil := []string{"a\tb", "x\ny", "p\r\nq", "l\u2028m", "n\u0085o", "\"", "\t", "\n\n", "a\x1b[31mb", "guests[1]{x}:\n1"}
	for _, s := range evil {
		q, _ := json.Marshal(s)
		js := `{"guests":[{"name":` + string(q) + `,"tags":[` + string(q) + `,"b"],"desc":{"x":` + string(q) + `}},{"name":"ok","k":` + string(q) + `}],"note":` + string(q) + `}`
		out := roundTrip(t, js)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 4 { // header, two rows, note
			t.Errorf("%q: %d lines, want 4:\n%s", s, len(lines), out)
		}
		for _, l := range lines[1:3] {
			if n := strings.Count(l, "\t"); n != strings.Count(lines[0], "\t") {
				t.Errorf("%q: row %q has %d tabs, header %d", s, l, n, strings.Count(lines[0], "\t"))
			}
		}
		if strings.ContainsAny(out, "\r\x1b\u2028\u0085") {
			t.Errorf("%q: raw control or separator in %q", s, out)
		}
	}
}

// TestForm pins the form's shape on a small list, as a person reads it.
func TestForm(t *testing.T) {
	got := roundTrip(t, `{"guests":[{"vmid":100,"name":"web-01","tags":["prod","web"],"usage":{"cpu":0.5}},{"vmid":101,"name":"1","lock":"backup","tags":["a,b"]}],"total":2,"state":{"status":"running","ha":{}},"warnings":[]}`)
	want := "guests[2]{vmid\tname\ttags[]\tusage.cpu\tlock}:\n" +
		"100\tweb-01\tprod,web\t0.5\t\n" +
		"101\t\"1\"\t\"a,b\"\t\tbackup\n" +
		"total: 2\n" +
		"state.status: running\n" +
		"state.ha: {}\n" +
		"warnings: []\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestAppendRefusesNonObjects(t *testing.T) {
	for _, js := range []string{`[]`, `1`, `"x"`, `{} {}`, `{`, ``} {
		if out, err := Append([]byte("keep"), []byte(js), testOptions); err == nil || !bytes.Equal(out, []byte("keep")) {
			t.Errorf("Append(%q) = %q, %v; want an error and b unchanged", js, out, err)
		}
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for _, text := range []string{
		"a",
		"a: ",
		"a: \"x",
		"a: x\na: y",
		"a: 1\na.b: 2",
		"a[2]: x",
		"a[2]:\nx",
		"a[1]{x\ty}:\n1",
		"a[0]: ",
		"a[1]{x[}:\n1",
		"a: [1",
		"a: \"x\"y",
		". : 1",
	} {
		if m, err := Parse(text); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", text, m)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, js := range corpus {
		f.Add(js)
	}
	for _, js := range []string{`{"a":01}`, `{"a":1.}`, `{"a":"\x"}`, "{\"a\":\"\t\"}", `{"a":tru}`, `{"a":[1,]}`, `{"a":1,}`, `{"a" 1}`, `{} x`, `{"a":-}`} {
		f.Add(js)
	}
	f.Fuzz(func(t *testing.T, js string) {
		if !json.Valid([]byte(js)) { // what encoding/json refuses, Append refuses
			if _, err := Append(nil, []byte(js), testOptions); err == nil {
				t.Fatalf("Append took invalid JSON %q", js)
			}
			t.Skip()
		}
		var m map[string]any
		if json.Unmarshal([]byte(js), &m) != nil || m == nil {
			t.Skip()
		}
		if _, err := Append(nil, []byte(js), testOptions); err != nil {
			t.Fatalf("Append(%q): %v", js, err)
		}
		norm, err := json.Marshal(m) // valid UTF-8, as a result's JSON is
		if err != nil {
			t.Skip()
		}
		roundTrip(t, string(norm))
	})
}

var testOptions = Options{ByteKeys: map[string]bool{"mem": true, "maxmem": true}}

// TestUnits: byte sizes whole in GiB or MiB are written in it, booleans in
// a table as y/n; anything else as it is.
func TestUnits(t *testing.T) {
	got := roundTrip(t, `{"maxmem":8589934592,"mem":1048576,"other":1073741824,"rows":[{"mem":0,"maxmem":2147483648,"b":true},{"mem":3221225472,"maxmem":1,"b":false},{"maxmem":1.5}]}`)
	want := "maxmem(GiB): 8\n" +
		"mem(MiB): 1\n" +
		"other: 1073741824\n" +
		"rows[3]{mem(GiB)\tmaxmem\tb(y/n)}:\n" +
		"0\t2147483648\ty\n" +
		"3\t1\tn\n" +
		"\t1.5\t\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	for _, js := range []string{`{"mem":18446744073709551615}`, `{"mem":18446744072635809792}`, `{"mem":-1073741824}`, `{"mem":1e9}`, `{"rows":[{"mem":1073741824},{"mem":"1073741824"}]}`} {
		roundTrip(t, js)
	}
}
