package main

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/doctor"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

const (
	doctorUser = "doctor@pve"
	// doctorPassword is a canary: no output may show it.
	doctorPassword = "PWCANARY-doctor-5b1e9c2a"
)

// passwordCluster is the demo cluster with the doctor token and a password
// user with privs, plus a user with a second factor.
func passwordCluster(privs map[string][]string) *proxmoxtest.Cluster {
	c := doctorCluster(privs)
	c.Users = map[string]*proxmoxtest.User{
		doctorUser: {Password: doctorPassword, Privileges: privs},
		"tfa@pve":  {Password: doctorPassword, SecondFactor: true, Privileges: privs},
	}
	return c
}

// passwordEnv turns runDoctor's token environment into a password one.
func passwordEnv(kv ...string) []string {
	return append([]string{"PVE_API_TOKEN_ID", "", "PVE_API_TOKEN_SECRET", "", "PVE_USERNAME", doctorUser, "PVE_PASSWORD", doctorPassword}, kv...)
}

// assertNoCredential fails when out shows the password or any ticket or
// CSRF token the fake saw.
func assertNoCredential(t *testing.T, srv *proxmoxtest.Server, outs ...string) {
	t.Helper()
	secrets := []string{doctorPassword}
	for _, r := range srv.Requests() {
		if c := strings.TrimPrefix(r.Header.Get("Cookie"), "PVEAuthCookie="); c != "" {
			raw, _ := url.QueryUnescape(c)
			secrets = append(secrets, c, raw)
		}
		if h := r.Header.Get("CSRFPreventionToken"); h != "" {
			secrets = append(secrets, h)
		}
	}
	if len(secrets) < 3 {
		t.Fatal("no ticket reached the fake: the test does not exercise ticket authentication")
	}
	for _, out := range outs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("output shows a credential (%.10s…):\n%s", s, out)
			}
		}
		if strings.Contains(out, "PVE:") {
			t.Errorf("output shows a ticket:\n%s", out)
		}
	}
}

// TestDoctorPassword: doctor says a password login is in use, that it
// worked, and how long the ticket lives; no credential is shown.
func TestDoctorPassword(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(passwordCluster(wellScopedPrivileges()))
	defer srv.Close()
	out, errOut, code := runDoctor(t, srv, passwordEnv()...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	wantLines(t, out,
		"[ok]   configuration: "+srv.URL+"/api2/json, password login (ticket) as "+doctorUser+", profile safe",
		"[ok]   login: accepted; Proxmox VE 9.1.1",
		"renewed automatically from ",
		"[info] API tokens are recommended over a password",
		"[ok]   privileges: every enabled tool",
	)
	// Just logged in: a bit under two hours (not a timing assertion: any
	// delay under an hour and 50 minutes passes).
	if !regexp.MustCompile(`\[ok\]   login: ticket valid for another 1h[0-5][0-9]m \(until `).MatchString(out) {
		t.Errorf("no remaining ticket lifetime of just under 2h:\n%s", out)
	}
	if strings.Contains(out, "[FAIL]") || strings.Contains(out, "--tokens") {
		t.Errorf("unexpected findings:\n%s", out)
	}
	assertNoCredential(t, srv, out, errOut)
}

// TestDoctorPasswordRefused: a wrong password and a second-factor account
// fail the login step with what to check, and show no credential.
func TestDoctorPasswordRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"wrong password", passwordEnv("PVE_PASSWORD", "not-the-password-at-all"),
			[]string{"[FAIL] login: refused by Proxmox", "the login was refused", "check PVE_USERNAME"}},
		{"second factor", passwordEnv("PVE_USERNAME", "tfa@pve"),
			[]string{"[FAIL] login: refused by Proxmox", "second factor", "use an API token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := proxmoxtest.NewServer(passwordCluster(wellScopedPrivileges()))
			defer srv.Close()
			out, errOut, code := runDoctor(t, srv, tc.env...)
			if code != doctor.ExitProblems {
				t.Fatalf("exit %d, want %d\n%s", code, doctor.ExitProblems, out)
			}
			wantLines(t, out, tc.want...)
			for _, s := range []string{doctorPassword, "not-the-password-at-all", "PVE:"} {
				if strings.Contains(out+errOut, s) {
					t.Errorf("output shows %q:\n%s%s", s, out, errOut)
				}
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want the login only", n)
			}
		})
	}
}

// TestCallWithPassword: a tool call with a password login works and its
// output and logs show no credential.
func TestCallWithPassword(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(passwordCluster(map[string][]string{"/": proxmoxtest.AllPrivileges()}))
	defer srv.Close()
	env := map[string]string{
		"PVE_URL": srv.URL, "PVE_TLS_FINGERPRINT": srv.Fingerprint(), "PVE_ALLOWED_NODES": "pve1",
		"PVE_USERNAME": "doctor", "PVE_REALM": "pve", "PVE_PASSWORD": doctorPassword,
		"PROXMOX_SAFE_READ_ONLY": "true", "PROXMOX_SAFE_LOG_LEVEL": "debug",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"call", "node_status", `{"node":"pve1"}`}, lookup, strings.NewReader(""), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "pve1") {
		t.Errorf("no node status in the output:\n%s", stdout.String())
	}
	assertNoCredential(t, srv, stdout.String(), stderr.String())
}

// TestPasswordSettings: the password settings parse, conflict and fail
// with the variable to fix, never with the value.
func TestPasswordSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(doctorPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"PVE_URL": "https://pve.example:8006", "PROXMOX_SAFE_READ_ONLY": "true"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	parse := func(args []string, env map[string]string) (*settings.Config, error) {
		return settings.Parse(args, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	}

	c, err := parse([]string{"tools"}, with("PVE_USERNAME", "root@pam", "PVE_PASSWORD_FILE", pwFile))
	if err != nil {
		t.Fatal(err)
	}
	if c.Password.Reveal() != doctorPassword || c.PasswordFrom != "PVE_PASSWORD_FILE" {
		t.Errorf("password from file = %q (from %s)", c.Password.Reveal(), c.PasswordFrom)
	}
	c, err = parse([]string{"--username", "root", "--realm", "pam", "--password-file", pwFile, "tools"}, with("PVE_PASSWORD", "from-the-environment"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Username != "root" || c.Realm != "pam" || c.Password.Reveal() != doctorPassword {
		t.Errorf("flags: user %q realm %q; --password-file must win over PVE_PASSWORD", c.Username, c.Realm)
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"token and password", with("PVE_API_TOKEN_ID", "a@pve!t", "PVE_API_TOKEN_SECRET", "x", "PVE_USERNAME", "root@pam", "PVE_PASSWORD", doctorPassword), "not both"},
		{"token and realm", with("PVE_API_TOKEN_ID", "a@pve!t", "PVE_API_TOKEN_SECRET", "x", "PVE_REALM", "pam"), "not both"},
		{"password without user", with("PVE_PASSWORD", doctorPassword), "PVE_USERNAME (--username) is required"},
		{"user without password", with("PVE_USERNAME", "root@pam"), "PVE_PASSWORD or PVE_PASSWORD_FILE"},
		{"password twice", with("PVE_USERNAME", "root@pam", "PVE_PASSWORD", doctorPassword, "PVE_PASSWORD_FILE", pwFile), "set only one of PVE_PASSWORD and PVE_PASSWORD_FILE"},
		{"missing file", with("PVE_USERNAME", "root@pam", "PVE_PASSWORD_FILE", filepath.Join(dir, "nope")), "PVE_PASSWORD_FILE (--password-file)"},
		{"neither", with(), "or PVE_USERNAME and PVE_PASSWORD"},
	} {
		if _, err := parse([]string{"tools"}, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		} else if strings.Contains(err.Error(), doctorPassword) {
			t.Errorf("%s: the error shows the password: %v", tc.name, err)
		}
	}

	// What the library checks is reported with the variable to fix.
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"short password", with("PVE_USERNAME", "root@pam", "PVE_PASSWORD", "short"), "PVE_PASSWORD: Password is shorter than 8 characters"},
		{"no realm", with("PVE_USERNAME", "root", "PVE_PASSWORD", doctorPassword), "PVE_USERNAME (--username): Username \"root\" is not a Proxmox user id"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"tools"}, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, code, stderr.String(), tc.want)
		}
		if strings.Contains(stderr.String()+stdout.String(), "short\n") || strings.Contains(stderr.String(), doctorPassword) {
			t.Errorf("%s: the password is shown:\n%s", tc.name, stderr.String())
		}
	}
}
