package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/doctor"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// runWith runs the command with exactly the environment kv (pairs).
func runWith(t *testing.T, kv map[string]string, args ...string) (string, string, int) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, lookup, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// fakeEnv is the minimal configuration a user must give: the URL and a token,
// plus the fake's certificate pin.
func fakeEnv(t *testing.T, kv ...string) (*proxmoxtest.Server, map[string]string) {
	t.Helper()
	srv := proxmoxtest.NewServer(nil)
	t.Cleanup(srv.Close)
	m := map[string]string{
		"PVE_URL":              srv.URL,
		"PVE_API_TOKEN_ID":     proxmoxtest.DefaultTokenID,
		"PVE_API_TOKEN_SECRET": proxmoxtest.DefaultTokenSecret,
		"PVE_TLS_FINGERPRINT":  srv.Fingerprint(),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return srv, m
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

const startGuest103 = `{"node":"pve2","type":"qemu","vmid":103,"action":"start","approval":"APPROVE start pve2/qemu/103"}`

// TestMinimalConfigDefaultAuditLog: with only PVE_URL and a token the
// default (safe) profile used to refuse to start for want of an audit log.
// Now the log defaults to the user's state directory and is announced.
func TestMinimalConfigDefaultAuditLog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, envKey, want string }{
		{"XDG_STATE_HOME", "XDG_STATE_HOME", "proxmox-safe-mcp/audit.jsonl"},
		{"HOME", "HOME", ".local/state/proxmox-safe-mcp/audit.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			srv, env := fakeEnv(t, tc.envKey, home)
			stdout, stderr, code := runWith(t, env, "call", "list_guests")
			if code != exitOK || !strings.Contains(stdout, `"vmid": 103`) {
				t.Fatalf("call list_guests: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			path := filepath.Join(home, tc.want)
			if !strings.Contains(stderr, "audit log "+path+" (the default") {
				t.Errorf("the default audit log is not announced on stderr: %q", stderr)
			}
			if m := mode(t, path); m != 0o600 {
				t.Errorf("log mode %v, want 0600", m)
			}
			if m := mode(t, filepath.Dir(path)); m != 0o700 {
				t.Errorf("directory mode %v, want 0700", m)
			}
			if m := mode(t, path+".key"); m != 0o600 {
				t.Errorf("key mode %v, want 0600", m)
			}

			// A mutation is recorded there, and the host lock lives beside it.
			env["PVE_ALLOWED_NODES"] = "pve2"
			if _, stderr, code := runWith(t, env, "call", "guest_power", startGuest103); code != exitOK {
				t.Fatalf("call guest_power: exit %d: %s", code, stderr)
			}
			if len(srv.MutatingRequests()) != 1 {
				t.Errorf("mutating requests: %v", srv.MutatingRequests())
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), "locks", "guest-103.lock")); err != nil {
				t.Errorf("no host lock file: %v", err)
			}
			out, _, code := runWith(t, map[string]string{tc.envKey: home}, "audit", "verify")
			if code != exitOK || !strings.Contains(out, "OK: 3 record(s)") || !strings.Contains(out, "keyed") || !strings.Contains(out, "sealed") {
				t.Errorf("audit verify (default path): exit %d: %s", code, out)
			}
			b, _ := os.ReadFile(path)
			if !bytes.Contains(b, []byte(`"event":"submitted"`)) {
				t.Errorf("log lacks the submitted record:\n%s", b)
			}
			if bytes.Contains(b, []byte(proxmoxtest.DefaultTokenSecret)) {
				t.Error("the token secret is in the audit log")
			}
			// The audit key is a secret too: never in the log, the output,
			// or doctor's report.
			keyHex, _ := os.ReadFile(path + ".key")
			keyHex = bytes.TrimSpace(keyHex)
			dout, derr, _ := runWith(t, env, "doctor")
			for where, text := range map[string]string{"audit log": string(b), "stdout": stdout, "stderr": stderr, "verify": out, "doctor": dout + derr} {
				if len(keyHex) < 32 || strings.Contains(text, string(keyHex)) {
					t.Errorf("the audit key appears in the %s", where)
				}
			}
		})
	}
}

func TestReadOnlyNeedsNoAuditLog(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	_, env := fakeEnv(t, "XDG_STATE_HOME", home, "PROXMOX_SAFE_READ_ONLY", "true")
	if _, stderr, code := runWith(t, env, "call", "list_guests"); code != exitOK || strings.Contains(stderr, "audit log") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "proxmox-safe-mcp", "audit.jsonl")); !os.IsNotExist(err) {
		t.Errorf("read-only mode created an audit log: %v", err)
	}
}

// TestAuditLogParentDirectoriesCreated: the README's own paths used to
// fail when the directory did not exist.
func TestAuditLogParentDirectoriesCreated(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "var", "log", "proxmox-safe-mcp", "audit.jsonl")
	_, env := fakeEnv(t, "PROXMOX_SAFE_AUDIT_LOG", path)
	if _, stderr, code := runWith(t, env, "call", "list_guests"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	} else if strings.Contains(stderr, "the default") {
		t.Errorf("a configured path announced as the default: %q", stderr)
	}
	for _, d := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		if m := mode(t, d); m != 0o700 {
			t.Errorf("%s: mode %v, want 0700", d, m)
		}
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("log mode %v", m)
	}
}

// TestStartupRefusesFIFOAuditLog: a FIFO as the audit path used to block
// startup forever, ignoring SIGTERM. The bound only keeps a regression
// from hanging the suite; nothing about speed is asserted.
func TestStartupRefusesFIFOAuditLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, env := fakeEnv(t, "PROXMOX_SAFE_AUDIT_LOG", path)
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, code := runWith(t, env)
		done <- result{stderr, code}
	}()
	select {
	case r := <-done:
		if r.code != exitUsage || !strings.Contains(r.stderr, "PROXMOX_SAFE_AUDIT_LOG") || !strings.Contains(r.stderr, "not a regular file") {
			t.Errorf("exit %d, stderr %q; want 2 and a clear error", r.code, r.stderr)
		}
	case <-time.After(time.Minute):
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			<-done
			f.Close()
		}
		t.Fatal("startup blocked on a FIFO audit log")
	}
}

// keyedLog writes a keyed, sealed log of n records with its key file, as
// the binary would, and returns its path.
func keyedLog(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	key, err := loadOrCreateAuditKey(path+".key", path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := auditlog.Open(path, &auditlog.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		rec := proxmoxsafe.AuditRecord{Event: proxmoxsafe.AuditSubmitted, Op: "GuestPower", Action: "start", Node: "pve1", Type: "qemu", VMID: 100 + i}
		if err := l.Record(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// tornKeyedLog is keyedLog(t, 2) with a torn last line: a log that does
// not verify.
func tornKeyedLog(t *testing.T) string {
	t.Helper()
	path := keyedLog(t, 2)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(`{"ti`); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAuditVerifyCommand(t *testing.T) {
	t.Parallel()
	verify := func(t *testing.T, args ...string) (string, string, int) {
		return runWith(t, map[string]string{}, append([]string{"audit", "verify"}, args...)...)
	}
	t.Run("ok", func(t *testing.T) {
		t.Parallel()
		out, _, code := verify(t, keyedLog(t, 3))
		if code != exitOK || !strings.Contains(out, "OK: 4 record(s), last seq 4, keyed (HMAC-SHA256), sealed") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("last line edited", func(t *testing.T) {
		t.Parallel()
		path := keyedLog(t, 3)
		b, _ := os.ReadFile(path)
		os.WriteFile(path, bytes.Replace(b, []byte(`"vmid":102`), []byte(`"vmid":902`), 1), 0o600)
		out, _, code := verify(t, path)
		if code != exitAuditBad || !strings.Contains(out, "DOES NOT VERIFY") || !strings.Contains(out, "does not match its seal") || !strings.Contains(out, "What to do: ") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("first lines removed", func(t *testing.T) {
		t.Parallel()
		path := keyedLog(t, 3)
		b, _ := os.ReadFile(path)
		_, rest, _ := bytes.Cut(b, []byte("\n"))
		os.WriteFile(path, rest, 0o600)
		if out, _, code := verify(t, path); code != exitAuditBad || !strings.Contains(out, "not the anchor") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		t.Parallel()
		path := keyedLog(t, 1)
		other := filepath.Join(t.TempDir(), "other.key")
		os.WriteFile(other, []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
		if out, _, code := verify(t, "--key-file", other, path); code != exitAuditBad || !strings.Contains(out, "another key") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("torn line, then repair", func(t *testing.T) {
		t.Parallel()
		path := keyedLog(t, 2)
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(`{"time":"2026-`)
		f.Close()
		out, _, code := verify(t, path)
		if code != exitAuditBad || !strings.Contains(out, "no trailing newline") || !strings.Contains(out, "Run: proxmox-safe-mcp audit repair "+path) {
			t.Fatalf("exit %d: %s", code, out)
		}
		out, _, code = runWith(t, map[string]string{}, "audit", "repair", path)
		if code != exitOK || !strings.Contains(out, "repaired: removed a torn final line after seq 3: 14 bytes") || !strings.Contains(out, "seq 4") {
			t.Fatalf("repair: exit %d: %s", code, out)
		}
		if out, _, code := verify(t, path); code != exitOK {
			t.Errorf("after repair: exit %d: %s", code, out)
		}
		if out, _, code := runWith(t, map[string]string{}, "audit", "repair", path); code != exitOK || !strings.Contains(out, "nothing to repair") {
			t.Errorf("second repair: exit %d: %s", code, out)
		}
	})
	t.Run("repair refuses tampering", func(t *testing.T) {
		t.Parallel()
		path := keyedLog(t, 3)
		b, _ := os.ReadFile(path)
		bad := append(bytes.Replace(b, []byte(`"vmid":100`), []byte(`"vmid":900`), 1), `{"ti`...)
		os.WriteFile(path, bad, 0o600)
		out, _, code := runWith(t, map[string]string{}, "audit", "repair", path)
		if after, _ := os.ReadFile(path); code != exitAuditBad || !strings.Contains(out, "not repaired") || !bytes.Equal(after, bad) {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("legacy log", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "old.jsonl")
		rec, _ := json.Marshal(proxmoxsafe.AuditRecord{Event: proxmoxsafe.AuditRefused, Op: "GuestPower", Seq: 1})
		os.WriteFile(path, append(rec, '\n'), 0o600)
		if out, _, code := verify(t, path); code != exitAuditWeak || !strings.Contains(out, "earlier version") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		t.Parallel()
		// A wrong path is not evidence of tampering: exit 2, no tamper
		// advice, for verify and repair alike, and a FIFO is not waited on.
		dir := t.TempDir()
		fifo := filepath.Join(dir, "audit.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		sealFifo := filepath.Join(dir, "log.seal")
		if err := syscall.Mkfifo(sealFifo, 0o600); err != nil {
			t.Fatal(err)
		}
		logWithFifoSeal := keyedLog(t, 1)
		for _, args := range [][]string{{fifo}, {dir}, {os.DevNull}, {"--seal", sealFifo, logWithFifoSeal}} {
			for _, sub := range []string{"verify", "repair"} {
				out, stderr, code := runWith(t, map[string]string{}, append([]string{"audit", sub}, args...)...)
				if code != exitUsage || !strings.Contains(stderr, "cannot be read") || !strings.Contains(stderr, "nothing was checked or changed") ||
					strings.Contains(out+stderr, "tampered") || strings.Contains(out+stderr, "DOES NOT VERIFY") {
					t.Errorf("audit %s %q: exit %d, stdout %q, stderr %q", sub, args, code, out, stderr)
				}
			}
		}
	})
	t.Run("usage", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{
			{filepath.Join(t.TempDir(), "missing.jsonl")},
			{"--bogus", "x"},
			{"a", "b"},
		} {
			if _, stderr, code := verify(t, args...); code != exitUsage || !strings.HasPrefix(stderr, "proxmox-safe-mcp: ") {
				t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
			}
		}
		if _, _, code := runWith(t, map[string]string{}, "audit"); code != exitUsage {
			t.Errorf("audit without a subcommand: exit %d", code)
		}
	})
}

// TestStartupAdviceOnBadLog: a log that does not verify stops startup with
// the reason and what to do.
func TestStartupAdviceOnBadLog(t *testing.T) {
	t.Parallel()
	path := tornKeyedLog(t)
	_, env := fakeEnv(t, "PROXMOX_SAFE_AUDIT_LOG", path)
	_, stderr, code := runWith(t, env, "call", "list_guests")
	for _, want := range []string{"PROXMOX_SAFE_AUDIT_LOG", "does not verify", "no trailing newline", "audit repair", "proxmox-safe-mcp audit verify " + path} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %q", want, stderr)
		}
	}
	if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, want 2 and one line: %q", code, stderr)
	}
}

func TestDoctorAuditLog(t *testing.T) {
	t.Parallel()
	srv := proxmoxtest.NewServer(doctorCluster(wellScopedPrivileges()))
	t.Cleanup(srv.Close)
	good := keyedLog(t, 2)
	torn := tornKeyedLog(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		code       int
		want       []string
	}{
		{"healthy", good, exitOK, []string{"[ok]   audit log: " + good + " is writable; 3 records verify (keyed, sealed)"}},
		{"new", filepath.Join(t.TempDir(), "sub", "audit.jsonl"), exitOK, []string{"does not exist yet; serve creates it"}},
		{"torn", torn, doctor.ExitProblems, []string{"[FAIL] audit log: " + torn + " does not verify", "run: proxmox-safe-mcp audit repair " + torn}},
		{"fifo", fifo, doctor.ExitProblems, []string{"is not a regular file"}},
		{"under a file", "/dev/null/x/audit.jsonl", doctor.ExitProblems, []string{"[FAIL] audit log: /dev/null/x/audit.jsonl", "not a directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, _, code := runDoctor(t, srv, "PROXMOX_SAFE_AUDIT_LOG", tc.path)
			if code != tc.code {
				t.Errorf("exit %d, want %d:\n%s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("doctor output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestAuditSyslog: every record also goes to syslog, one message per
// line, so a copy off the host can be checked against the chain.
func TestAuditSyslog(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "log.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Skipf("unixgram: %v", err)
	}
	defer conn.Close()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	srv, env := fakeEnv(t, "PROXMOX_SAFE_AUDIT_LOG", path, "PROXMOX_SAFE_AUDIT_SYSLOG", "unix://"+sock, "PVE_ALLOWED_NODES", "pve2")
	if _, stderr, code := runWith(t, env, "call", "guest_power", startGuest103); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(srv.MutatingRequests()) != 1 {
		t.Fatal("the mutation was not sent")
	}
	file, _ := os.ReadFile(path)
	var got []string
	buf := make([]byte, 1<<20)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // bounds a regression, asserts nothing
	for {
		n, err := conn.Read(buf)
		if err != nil {
			break
		}
		msg := string(buf[:n])
		_, body, ok := strings.Cut(msg, auditSyslogTag+"[")
		if !ok || !strings.HasPrefix(msg, "<") {
			t.Fatalf("not a syslog message with our tag: %q", msg)
		}
		_, body, _ = strings.Cut(body, "]: ")
		got = append(got, body)
		if len(got) == strings.Count(string(file), "\n") {
			break
		}
	}
	want := strings.SplitAfter(string(file), "\n")
	want = want[:len(want)-1]
	if strings.Join(got, "") != strings.Join(want, "") {
		t.Fatalf("syslog received\n%q\nthe file holds\n%q", got, want)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.jsonl")
	os.WriteFile(copyPath, []byte(strings.Join(got, "")), 0o600)
	out, _, code := runWith(t, map[string]string{}, "audit", "verify", "--key-file", path+".key", "--partial", copyPath)
	if code != exitAuditWeak || !strings.Contains(out, "chain verifies") {
		t.Errorf("verify of the syslog copy: exit %d: %s", code, out)
	}

	_, env = fakeEnv(t, "PROXMOX_SAFE_AUDIT_SYSLOG", "smtp://x")
	if _, stderr, code := runWith(t, env, "call", "list_guests"); code != exitUsage || !strings.Contains(stderr, "PROXMOX_SAFE_AUDIT_SYSLOG") {
		t.Errorf("bad syslog setting: exit %d, %q", code, stderr)
	}
}
