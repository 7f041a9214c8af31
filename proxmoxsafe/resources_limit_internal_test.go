package proxmoxsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// tooManyRowsBody is {"data":[first,{},{},…]} with rows rows in all.
func tooManyRowsBody(first string, rows int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"data":[` + first)
	for range rows - 1 {
		b.WriteString(`,{}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestResourceRowsLimit: a list of more rows than maxResourceRows is
// declined by the fast path before it allocates any, and refused by the
// encoding/json path with errTooManyRows and nothing decoded.
func TestResourceRowsLimit(t *testing.T) {
	t.Parallel()
	body := tooManyRowsBody(`{}`, maxResourceRows+1)
	if rows, ok := decodeResources(body); ok {
		t.Fatalf("fast path took %d rows, want it declined", len(rows))
	}
	var raw resourceRows
	env := struct {
		Data any `json:"data"`
	}{Data: &raw}
	if err := json.Unmarshal(body, &env); !errors.Is(err, errTooManyRows) || raw != nil {
		t.Fatalf("encoding/json path: err = %v, %d rows; want errTooManyRows and none", err, len(raw))
	}
	// Within the limit the encoding/json path decodes as before.
	small := []byte(`{"data":[{"vmid":100,"type":"qemu"},{"vmid":"101","type":"lxc"}]}`)
	raw = nil
	if err := json.Unmarshal(small, &env); err != nil || len(raw) != 2 || raw[1].VMID != 101 {
		t.Fatalf("small list: err = %v, rows = %+v", err, raw)
	}
}

func TestMoreRowsThan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		data  string
		limit int
		want  bool
	}{
		{`[]`, 0, false},
		{`[{}]`, 0, true},
		{`[{}]`, 1, false},
		{`[1, 2]`, 2, false},
		{`[1, 2, 3]`, 2, true},
		{` [ {"a":[1,2,3],"b":{"c":",]"}} , 2 ] `, 2, false},
		{`[{"a":[1,2,3]},2,{}]`, 2, true},
		{`null`, 0, false},
		{`{"a":1,"b":2}`, 0, false},
	} {
		if got, _ := moreRowsThan([]byte(tc.data), tc.limit); got != tc.want {
			t.Errorf("moreRowsThan(%s, %d) = %v, want %v", tc.data, tc.limit, got, tc.want)
		}
	}
}

// TestResourceRowsLimitDeepFirstRow: a first row nested deeper than the
// scanner goes must not stop the count. encoding/json keeps decoding the
// rows after a type error, so an uncounted list of millions of rows would
// be allocated in full before its error came back.
func TestResourceRowsLimitDeepFirstRow(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	body := tooManyRowsBody(deep, maxResourceRows+1)
	var raw resourceRows
	env := struct {
		Data any `json:"data"`
	}{Data: &raw}
	err := json.Unmarshal(body, &env)
	if err == nil || raw != nil {
		t.Fatalf("err = %v, %d rows decoded; want a refusal and none", err, len(raw))
	}
	// The same nesting inside a field of a short list is still refused
	// before decoding, with an error that says why.
	raw = nil
	short := []byte(`{"data":[{"x":` + deep + `},{}]}`)
	if err := json.Unmarshal(short, &env); err == nil || !strings.Contains(err.Error(), "nested") || raw != nil {
		t.Fatalf("short deep list: err = %v, %d rows", err, len(raw))
	}
}
