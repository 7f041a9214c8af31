package jsonrpc

import (
	"encoding/json"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func id(t *testing.T, v any) sdk.ID {
	t.Helper()
	i, err := sdk.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestCancelledID reads the id a notifications/cancelled names, as a
// number or a string, and nothing from another method or from params
// without a valid id.
func TestCancelledID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, params string
		want           any // nil: no id
	}{
		{MethodCancelled, `{"requestId":7,"reason":"user"}`, 7.0},
		{MethodCancelled, `{"requestId":"a-1"}`, "a-1"},
		{MethodCancelled, `{"requestId":null}`, nil},
		{MethodCancelled, `{"requestId":{"x":1}}`, nil},
		{MethodCancelled, `{}`, nil},
		{MethodCancelled, `not json`, nil},
		{MethodCancelled, ``, nil},
		{"notifications/progress", `{"requestId":7}`, nil},
	} {
		got, ok := CancelledID(tc.method, json.RawMessage(tc.params))
		if tc.want == nil {
			if ok {
				t.Errorf("%s %s: id %v, want none", tc.method, tc.params, got.Raw())
			}
			continue
		}
		if !ok || got != id(t, tc.want) {
			t.Errorf("%s %s: id %v %v, want %v", tc.method, tc.params, got.Raw(), ok, tc.want)
		}
	}
}

// TestCancellations: only a request in flight can be cancelled; its answer
// is dropped once (Finish forgets it); a request answered before the
// notification, or one never seen, is unaffected; a new request reusing
// an id starts uncancelled.
func TestCancellations(t *testing.T) {
	t.Parallel()
	var c Cancellations // the zero value is ready
	if c.Cancel(id(t, 1.0)) || c.Finish(id(t, 1.0)) {
		t.Error("a request never started was cancelled")
	}
	c.Start(id(t, 1.0))
	c.Start(id(t, "s"))
	if c.Len() != 2 {
		t.Errorf("Len %d, want 2", c.Len())
	}
	if !c.Cancel(id(t, 1.0)) {
		t.Error("Cancel of a request in flight reported false")
	}
	if c.Finish(id(t, "s")) {
		t.Error("an uncancelled request's answer would be dropped")
	}
	if c.Cancel(id(t, "s")) {
		t.Error("a request already answered was cancelled")
	}
	if !c.Finish(id(t, 1.0)) {
		t.Error("the cancelled request's answer would be sent")
	}
	if c.Finish(id(t, 1.0)) || c.Len() != 0 {
		t.Errorf("Finish did not forget the request (Len %d)", c.Len())
	}
	c.Start(id(t, 2.0))
	c.Cancel(id(t, 2.0))
	c.Start(id(t, 2.0)) // the client reuses the id for a new request
	if c.Finish(id(t, 2.0)) {
		t.Error("a new request with a cancelled request's id starts cancelled")
	}
}

// TestCancellationsConcurrent: one set serves the reader and the writers
// of a session at once (run under -race).
func TestCancellationsConcurrent(t *testing.T) {
	t.Parallel()
	var c Cancellations
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				k := id(t, float64(i*1000+j))
				c.Start(k)
				if j%2 == 0 {
					c.Cancel(k)
				}
				if got := c.Finish(k); got != (j%2 == 0) {
					t.Errorf("request %d: cancelled %v", i*1000+j, got)
				}
			}
		})
	}
	wg.Wait()
	if c.Len() != 0 {
		t.Errorf("Len %d after every request finished", c.Len())
	}
}
