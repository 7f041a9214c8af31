package proxmoxsafe

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCompileProtectRules: each protection field is checked and names
// itself when wrong; names and tags are kept lower case and once; the
// minimum uptime defaults to an hour and is off when negative. The
// operations' refusals are responder_test.go's.
func TestCompileProtectRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p     Policy
		field string
	}{
		{Policy{ProtectedNames: []string{"bad name"}}, "Policy.ProtectedNames"},
		{Policy{ProtectedTags: []string{"a;b"}}, "Policy.ProtectedTags"},
		{Policy{ProtectedPools: []string{"a/b"}}, "Policy.ProtectedPools"},
	} {
		_, err := compileProtectRules(tc.p)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field || !strings.HasPrefix(ce.Problem, tc.field+": ") {
			t.Errorf("%+v: err = %v, want a ConfigError for %s", tc.p, err, tc.field)
		}
	}
	g, err := compileProtectRules(Policy{ProtectedNames: []string{"DB", "db"}, ProtectedTags: []string{"Prod", "prod"}, ProtectedPools: []string{"P", "P"}, ResetWithoutAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(g.names, ",") != "db" || strings.Join(g.tags, ",") != "prod" || strings.Join(g.pools, ",") != "P" || !g.resetWithoutAgent || !g.byAttributes() {
		t.Errorf("compiled %+v", g)
	}
	for in, want := range map[time.Duration]time.Duration{0: DefaultMinUptime, -1: 0, time.Minute: time.Minute} {
		g, err := compileProtectRules(Policy{MinUptime: in})
		if err != nil || g.minUptime != want || g.byAttributes() {
			t.Errorf("MinUptime %v: minUptime %v (err %v), want %v", in, g.minUptime, err, want)
		}
	}
}

// TestProtectedBy: full and short names both ways, tags without case,
// pools exactly.
func TestProtectedBy(t *testing.T) {
	t.Parallel()
	g, err := compileProtectRules(Policy{ProtectedNames: []string{"db", "web.example.com"}, ProtectedTags: []string{"prod"}, ProtectedPools: []string{"Core"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tags []string
		pool string
		want string // part of the reason, "" for not protected
	}{
		{"db", nil, "", `name "db"`},
		{"DB.example.com", nil, "", `matches the protected name "db"`},
		{"web", nil, "", `matches the protected name "web.example.com"`},
		{"dbx", nil, "", ""},
		{"app", []string{"x", "PROD"}, "", `protected tag "PROD"`},
		{"app", nil, "Core", `protected pool "Core"`},
		{"app", nil, "core", ""},
		{"", nil, "", ""},
	} {
		got := g.protectedBy(tc.name, tc.tags, tc.pool)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("protectedBy(%q, %q, %q) = %q, want %q", tc.name, tc.tags, tc.pool, got, tc.want)
		}
	}
}

// TestCheckUptime: a reboot of a guest up for less than the minimum is
// refused as a precondition; at the minimum, or with the check off, not.
func TestCheckUptime(t *testing.T) {
	t.Parallel()
	g := &protectRules{minUptime: time.Hour}
	tg := Target{Node: "pve1", Type: "qemu", VMID: 100}
	err := g.checkUptime("reboot", tg, GuestState{}, 59*time.Minute)
	if !errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), "up for 59m, less than the minimum uptime 1h before a reboot") {
		t.Errorf("err = %v, want a precondition refusal naming the minimum", err)
	}
	if err := g.checkUptime("reboot", tg, GuestState{}, time.Hour); err != nil {
		t.Errorf("at the minimum: %v", err)
	}
	if err := (&protectRules{}).checkUptime("reset", tg, GuestState{}, 0); err != nil {
		t.Errorf("with the check off: %v", err)
	}
}
