package pve

import "testing"

func TestPagedDecodesTotal(t *testing.T) {
	tests := []struct {
		body  string
		total int
		n     int
	}{
		{`{"data":[{"n":1,"t":"TASK OK"}],"total":1}`, 1, 1},
		{`{"total":"761","data":[]}`, 761, 0},
		{`{"data":[{"n":1,"t":"x"}]}`, -1, 1},
		{`{"data":[],"total":-3}`, -1, 0},
	}
	for _, tt := range tests {
		var lines []map[string]any
		p := &Paged{Data: &lines}
		if err := p.decode("GET", "/x", []byte(tt.body)); err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if p.Total != tt.total || len(lines) != tt.n {
			t.Errorf("%s: total %d, %d lines; want %d, %d", tt.body, p.Total, len(lines), tt.total, tt.n)
		}
	}
	for _, bad := range []string{`{"total":1}`, `{"data":[],"total":"x"}`, `not json`} {
		var lines []map[string]any
		if err := (&Paged{Data: &lines}).decode("GET", "/x", []byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
