package proxmoxsafe_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// hugeResourceList is a /cluster/resources answer with guest 100 first
// and then empty rows, 200,001 in all: more than any real cluster.
func hugeResourceList() []byte {
	var b bytes.Buffer
	b.WriteString(`{"data":[{"id":"qemu/100","vmid":100,"type":"qemu","node":"pve1","name":"web1","status":"running"}`)
	for range 200_000 {
		b.WriteString(`,{}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestResourceListRowLimit: an answer of more rows than the limit is
// refused with a clear error by a read, and by a mutation's precheck
// (protection by tag reads the list) with zero mutating requests.
func TestResourceListRowLimit(t *testing.T) {
	t.Parallel()
	body := hugeResourceList()
	t.Run("read", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, nil)
		e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/cluster/resources", Body: body})
		res, err := e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{})
		if err == nil || !strings.Contains(err.Error(), "more than 200000 entries") {
			t.Fatalf("ListGuests = %+v, %v; want the row limit's refusal", res, err)
		}
	})
	// The other reads of /cluster/resources (nodes, storage) decode with
	// encoding/json alone, under the same limit. ClusterStatus reports a
	// failed usage read as a warning, by design.
	for name, read := range map[string]func(e *env) string{
		"cluster status": func(e *env) string {
			res, err := e.client.ClusterStatus(t.Context())
			if err != nil {
				return err.Error()
			}
			return strings.Join(res.Warnings, "\n")
		},
		"storage": func(e *env) string {
			_, err := e.client.ListStorage(t.Context(), proxmoxsafe.ListStorageInput{})
			if err != nil {
				return err.Error()
			}
			return ""
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/cluster/resources", Body: body})
			if got := read(e); !strings.Contains(got, "more than 200000 entries") {
				t.Fatalf("error or warnings = %q, want the row limit's refusal", got)
			}
		})
	}
	t.Run("mutation precheck", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ProtectedTags = []string{"keep"} })
		e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/cluster/resources", Body: body})
		_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown))
		var pe *proxmoxsafe.PreconditionReadError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "more than 200000 entries") {
			t.Fatalf("err = %v, want a precondition read error naming the row limit", err)
		}
		if m := e.fake.MutatingRequests(); len(m) != 0 {
			t.Errorf("mutating requests after the refusal: %v", reqLines(m))
		}
	})
}
