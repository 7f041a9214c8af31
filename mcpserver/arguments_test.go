package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNullArguments: `"arguments": null` on a mutation tool is refused like
// `{}` (it panicked in go-sdk's schema-default step, and the recovery said
// the outcome was unknown, with no audit record).
func TestNullArguments(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})
			for _, tool := range []string{ToolGuestPower, ToolSnapshotGuest, ToolListGuests} { // the read last: it sends GETs
				if tool == ToolListGuests {
					if got := f.fake.Requests(); len(got) != 0 {
						t.Errorf("requests after invalid input: %v", requestLines(got))
					}
				}
				res := f.call(t, ctx, tool, json.RawMessage("null"))
				if tool == ToolListGuests {
					if res.IsError {
						t.Errorf("%s with null arguments: %s", tool, text(t, res))
					}
					continue
				}
				msg := text(t, res)
				if e := errorOf(t, res); e.Error.Kind != "invalid_input" || e.Error.ActionTaken != "none" ||
					strings.Contains(msg, "internal error") || strings.Contains(msg, "unknown") || !strings.Contains(msg, "is required") {
					t.Errorf("%s with null arguments: %q", tool, msg)
				}
			}
			refused := 0
			for _, r := range f.audit.records(t) {
				if r.Event == "refused" {
					refused++
				}
			}
			if refused != 2 {
				t.Errorf("%d refused audit records, want 2:\n%s", refused, f.audit.String())
			}
			if strings.Contains(f.logs.String(), "panic") {
				t.Errorf("a panic was logged:\n%s", f.logs.String())
			}
		})
	}
}
