package settings

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLooseSecretFiles: every kind of file that holds a secret or a key
// follows the one rule of checkLooseFile. Private (0600), nothing is said;
// readable by others (0644, 0640), the server still starts and warns once,
// naming the setting, the file and the fix, never the content; writable by
// group or others (0660, 0602), it is refused with the setting, the file
// and the fix (whoever can replace it chooses the secret); 0440 in
// systemd's credentials directory (what LoadCredential= shows), nothing is
// said, while the same file outside it warns.
func TestLooseSecretFiles(t *testing.T) {
	t.Parallel()
	hexKey := strings.Repeat("5a", 32)
	for _, kind := range []struct {
		name, setting, content string
		file                   string // the file's name; "": from the kind and mode
		config                 func(path string) (args []string, env []string)
	}{
		{"token secret", "PVE_API_TOKEN_SECRET_FILE", "aaaaaaaa-2222-4333-8444-555555555555", "", func(p string) ([]string, []string) {
			return nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", p)
		}},
		{"password", "PVE_PASSWORD_FILE", "a-pass-word-canary", "", func(p string) ([]string, []string) {
			return []string{"tools"}, []string{"PVE_URL", "https://pve.example:8006", "PROXMOX_SAFE_READ_ONLY", "true", "PVE_USERNAME", "root@pam", "PVE_PASSWORD_FILE", p}
		}},
		{"MCP bearer token", "MCP_AUTH_TOKEN_FILE", httpToken, "", func(p string) ([]string, []string) {
			return []string{"--http", "8000"}, with("MCP_AUTH_TOKEN_FILE", p)
		}},
		{"operator token", "PROXMOX_SAFE_OPERATOR_TOKEN_FILE", operatorSecret, "", func(p string) ([]string, []string) {
			return []string{"--demo", "--http", "8000", "--operator-token-file", p}, nil
		}},
		{"audit key", "PROXMOX_SAFE_AUDIT_KEY_FILE", hexKey, "", func(p string) ([]string, []string) {
			return nil, with("PROXMOX_SAFE_READ_ONLY", "false", "PROXMOX_SAFE_AUDIT_LOG", filepath.Join(filepath.Dir(p), "audit.jsonl"), "PROXMOX_SAFE_AUDIT_KEY_FILE", p)
		}},
		{"elicitation key", "PROXMOX_SAFE_ELICIT_KEY_FILE", hexKey, "", func(p string) ([]string, []string) {
			return nil, with("PROXMOX_SAFE_ELICIT_KEY_FILE", p)
		}},
		// Unset, the key is elicit.key beside the audit log once a class
		// uses elicit.
		{"default elicitation key", "PROXMOX_SAFE_ELICIT_KEY_FILE", hexKey, ElicitKeyName, func(p string) ([]string, []string) {
			return nil, with("PROXMOX_SAFE_READ_ONLY", "false", "PROXMOX_SAFE_AUDIT_LOG", filepath.Join(filepath.Dir(p), "audit.jsonl"), "PROXMOX_SAFE_APPROVALS", "power=elicit")
		}},
	} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			creds := t.TempDir()
			for _, tc := range []struct {
				name     string
				mode     os.FileMode
				inCreds  bool
				Warnings int
				refused  bool
			}{
				{"0600", 0o600, false, 0, false},
				{"0644", 0o644, false, 1, false},
				{"0640", 0o640, false, 1, false},
				{"0660", 0o660, false, 0, true},
				{"0602", 0o602, false, 0, true},
				{"0440 credential", 0o440, true, 0, false},
				{"0440 elsewhere", 0o440, false, 1, false},
			} {
				dir := t.TempDir()
				if tc.inCreds {
					dir = creds
				}
				name := kind.file
				if name == "" {
					name = strings.ReplaceAll(kind.name+" "+tc.name, " ", "-")
				} else if tc.inCreds {
					continue // one file of that name per directory
				}
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, []byte(kind.content+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.mode); err != nil { // umask-proof
					t.Fatal(err)
				}
				args, env := kind.config(path)
				env = append(env, "CREDENTIALS_DIRECTORY", creds)
				c, err := Parse(args, func(k string) (string, bool) {
					for i := 0; i+1 < len(env); i += 2 {
						if env[i] == k {
							return env[i+1], true
						}
					}
					return "", false
				})
				if tc.refused {
					if err == nil {
						t.Fatalf("%s: started (Warnings %q), want it refused: writable by group or others", tc.name, c.Warnings)
					}
					if msg := err.Error(); !strings.Contains(msg, kind.setting) || !strings.Contains(msg, path) || !strings.Contains(msg, "writable by group or others") || !strings.Contains(msg, "chmod 600") || strings.Contains(msg, kind.content) {
						t.Errorf("%s: refusal %q does not name the setting, the file and the fix, or shows the content", tc.name, msg)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if len(c.Warnings) != tc.Warnings {
					t.Fatalf("%s: Warnings %q, want %d", tc.name, c.Warnings, tc.Warnings)
				}
				for _, w := range c.Warnings {
					if !strings.Contains(w, kind.setting) || !strings.Contains(w, path) || !strings.Contains(w, "chmod 600") {
						t.Errorf("%s: warning %q does not name the setting, the file and the fix", tc.name, w)
					}
					if strings.Contains(w, kind.content) {
						t.Errorf("%s: the warning shows the content", tc.name)
					}
				}
			}
		})
	}
}

// TestSecretFileFIFO: a secret file that is a FIFO is refused at once as
// not a regular file, for every setting read by readSecretFile; before,
// opening it blocked the start until something wrote to it.
func TestSecretFileFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{nil, with("PVE_API_TOKEN_SECRET", "", "PVE_API_TOKEN_SECRET_FILE", fifo), "PVE_API_TOKEN_SECRET_FILE"},
		{[]string{"--http", "8000"}, with("MCP_AUTH_TOKEN_FILE", fifo), "MCP_AUTH_TOKEN_FILE"},
		{[]string{"--demo", "--http", "8000", "--operator-token-file", fifo}, nil, "PROXMOX_SAFE_OPERATOR_TOKEN_FILE"},
	} {
		_, err := Parse(tc.args, env(tc.env...))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v, want it refused as not a regular file", tc.want, err)
		}
	}
}
