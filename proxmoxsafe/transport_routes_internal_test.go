package proxmoxsafe

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// The transport guard's route tables (internal/routes) are written out
// by hand, on purpose independent of the operations' declarations
// (OperationInfo): a wrong route or class in an operation is then stopped
// below it instead of being repeated in the guard. These tests are what
// ties the two: every operation's declared request, with sample segments,
// passes the guard of exactly the classes that declare it, and every
// read's passes with no class at all.

// routeSamples are the values a declared route's placeholders take: each
// request is tried once per value, so {type} covers both guest types. A
// placeholder without a sample fails the test, so a new one is added here.
var routeSamples = map[string][]string{
	"node":     {"pve1"},
	"type":     {"qemu", "lxc"},
	"vmid":     {"100"},
	"snapname": {"s1"},
	"storage":  {"local"},
	// A backup volume, a file archive and a Proxmox Backup Server
	// snapshot; its "/" separate path segments (as DeleteBackup sends it).
	"volume": {"local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst", "pbs:backup/vm/100/2026-01-01T00:00:00Z"},
	"upid":   {"UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:a@pve!tok:"},
}

// declaredRequest is one concrete request an operation sends.
type declaredRequest struct{ method, path string }

// declaredRequests expands an operation's route into its concrete
// requests: every sample of each placeholder, {action} as each declared
// action, the container's method where it differs.
func declaredRequests(t *testing.T, op OperationInfo) []declaredRequest {
	t.Helper()
	paths := [][]string{nil} // segments, unescaped
	typeOf := []string{""}   // the {type} each path took
	for _, seg := range strings.Split(strings.TrimPrefix(op.Route, "/"), "/") {
		var alts []string
		switch name, ok := strings.CutPrefix(seg, "{"); {
		case !ok:
			alts = []string{seg}
		case name == "action}":
			alts = op.ActionNames()
		default:
			alts = routeSamples[strings.TrimSuffix(name, "}")]
			if len(alts) == 0 {
				t.Fatalf("%s: route %s: no sample for %s (add one to routeSamples)", op.Name, op.Route, seg)
			}
		}
		var next [][]string
		var nextType []string
		for i, p := range paths {
			for _, a := range alts {
				next = append(next, append(slices.Clone(p), strings.Split(a, "/")...))
				if seg == "{type}" {
					nextType = append(nextType, a)
				} else {
					nextType = append(nextType, typeOf[i])
				}
			}
		}
		paths, typeOf = next, nextType
	}
	out := make([]declaredRequest, len(paths))
	for i, segs := range paths {
		m := op.Method
		if op.ContainerMethod != "" && (typeOf[i] == "lxc" || slices.Contains(segs, "lxc")) {
			m = op.ContainerMethod
		}
		out[i] = declaredRequest{m, pve.Path(segs...)}
	}
	return out
}

// isGateway reports whether op is the API gateway's (any path): its
// routes are the gateway's, tested in gateway_internal_test.go.
func isGateway(op OperationInfo) bool { return strings.Contains(op.Route, "{path...}") }

// guardPolicy is a policy on pve1 enabling classes, with the phrase level
// for each (the default levels of destroy and gateway-write need
// approvers these tests have not; the guard does not look at levels).
func guardPolicy(classes ...Class) Policy {
	p := Policy{AllowedNodes: []string{"pve1"}, Classes: classes, Approvals: map[Class][]ApprovalLevel{}}
	for _, cl := range classes {
		p.Approvals[cl] = []ApprovalLevel{LevelPhrase}
	}
	return p
}

// reaches sends each request below the library through a client of
// policy p and reports which reached the network; a refused one must be
// refused as not allowed.
func reaches(t *testing.T, p Policy, reqs []declaredRequest) map[declaredRequest]bool {
	t.Helper()
	c, net := guardedClient(t, p)
	out := map[declaredRequest]bool{}
	for _, r := range reqs {
		before := net.n.Load()
		err := c.api.Do(t.Context(), r.method, r.path, url.Values{}, nil)
		out[r] = net.n.Load() > before
		if !out[r] {
			var re *RefusalError
			if !errors.As(err, &re) || !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "transport guard") {
				t.Errorf("%s %s: err = %v, want the transport guard's refusal", r.method, r.path, err)
			}
		}
	}
	return out
}

// TestTransportGuardCoversEachOperation: each mutation's declared request
// passes the guard with its own class alone, and is refused with every
// other single class — except a class that declares the same request
// itself (the responder's start and reboot are GuestPower's routes, its
// snapshot cleanup's DELETE is DeleteSnapshot's: the same request, allowed
// to each on purpose). Gateway-write, whose route lets any other POST,
// PUT or DELETE outside the deny list through, does not let a dedicated
// operation's request through either: the library refuses such a gateway
// write, and the guard holds it to the operation's class should the
// library send one. With no class, or in read-only mode with its class,
// it is refused.
func TestTransportGuardCoversEachOperation(t *testing.T) {
	t.Parallel()
	owners := map[declaredRequest][]Class{} // who declares each request
	var reqs []declaredRequest
	mutations := 0
	for _, op := range Operations() {
		if op.Class == "" || isGateway(op) || op.Method == http.MethodGet {
			continue
		}
		mutations++
		for _, r := range declaredRequests(t, op) {
			if owners[r] == nil {
				reqs = append(reqs, r)
			}
			if !slices.Contains(owners[r], op.Class) {
				owners[r] = append(owners[r], op.Class)
			}
		}
	}
	if mutations < 17 || len(reqs) < 29 {
		t.Fatalf("only %d mutations, %d requests: the declarations were not read", mutations, len(reqs))
	}
	for _, cl := range classOrder {
		got := reaches(t, guardPolicy(cl), reqs)
		for _, r := range reqs {
			want := slices.Contains(owners[r], cl)
			if got[r] != want {
				t.Errorf("%s %s with only class %q enabled: reached %v, want %v (declared by %q)", r.method, r.path, cl, got[r], want, owners[r])
			}
		}
	}
	for name, p := range map[string]Policy{"no class": guardPolicy()} {
		for r, passed := range reaches(t, p, reqs) {
			if passed {
				t.Errorf("%s %s reached the network with %s", r.method, r.path, name)
			}
		}
	}
	for r, classes := range owners {
		for _, cl := range classes {
			p := guardPolicy(cl)
			p.ReadOnly = true
			if reaches(t, p, []declaredRequest{r})[r] {
				t.Errorf("%s %s reached the network in read-only mode with class %q", r.method, r.path, cl)
			}
		}
	}
}

// TestTransportGuardCoversEachRead: every read's declared GET passes the
// guard with no class enabled, in read-only mode and beside every single
// class.
func TestTransportGuardCoversEachRead(t *testing.T) {
	t.Parallel()
	var reqs []declaredRequest
	for _, op := range Operations() {
		if op.Class != "" || isGateway(op) {
			continue
		}
		if op.Method != http.MethodGet {
			t.Errorf("read %s declares method %q, want GET", op.Name, op.Method)
		}
		reqs = append(reqs, declaredRequests(t, op)...)
	}
	if len(reqs) < 15 {
		t.Fatalf("only %d read requests: the declarations were not read", len(reqs))
	}
	readOnly := guardPolicy()
	readOnly.ReadOnly = true
	policies := map[string]Policy{"no class": guardPolicy(), "read-only mode": readOnly}
	for _, cl := range classOrder {
		policies["class "+string(cl)] = guardPolicy(cl)
	}
	for name, p := range policies {
		for r, passed := range reaches(t, p, reqs) {
			if !passed {
				t.Errorf("%s %s was refused with %s", r.method, r.path, name)
			}
		}
	}
}

// TestDeclaredRequests: the expansion the two tests above rely on.
func TestDeclaredRequests(t *testing.T) {
	t.Parallel()
	got := declaredRequests(t, OperationInfo{Name: "X", Method: "POST", ContainerMethod: "PUT",
		Route: "/nodes/{node}/{type}/{vmid}/status/{action}", Actions: []ActionInfo{{Name: "start"}, {Name: "stop"}}})
	want := []declaredRequest{
		{"POST", "/nodes/pve1/qemu/100/status/start"}, {"POST", "/nodes/pve1/qemu/100/status/stop"},
		{"PUT", "/nodes/pve1/lxc/100/status/start"}, {"PUT", "/nodes/pve1/lxc/100/status/stop"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("declaredRequests = %q, want %q", got, want)
	}
	if got := declaredRequests(t, OperationInfo{Method: "GET", Route: "/nodes/{node}/tasks/{upid}/log"}); len(got) != 1 || !strings.Contains(got[0].path, "a@pve%21tok") {
		t.Errorf("a UPID is escaped as the library sends it: %q", got)
	}
}
