package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
)

// TestCheckAudit: the log serve would open is checked without writing:
// a missing one can be created, a directory cannot be a log, and an empty
// file that is not an audit log does not verify.
func TestCheckAudit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noKey := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	for _, tc := range []struct {
		name, path, content string
		want                string
	}{
		{"missing", filepath.Join(dir, "new", "audit.jsonl"), "", "does not exist yet; serve creates it"},
		{"directory", dir, "", "is not a regular file"},
		{"not a log", filepath.Join(dir, "junk.jsonl"), "not json\n", "does not verify"},
	} {
		if tc.content != "" {
			if err := os.WriteFile(tc.path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		r := &report{w: &strings.Builder{}}
		checkAudit(r, &settings.Config{Profile: "safe", AuditLog: tc.path}, noKey)
		if len(r.checks) == 0 || !strings.Contains(r.checks[0].Message, tc.want) {
			t.Errorf("%s: %+v, want %q", tc.name, r.checks, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
			t.Errorf("%s: doctor created a directory", tc.name)
		}
	}
	r := &report{w: &strings.Builder{}}
	checkAudit(r, &settings.Config{Profile: "readonly"}, noKey)
	if len(r.checks) != 1 || !strings.Contains(r.checks[0].Message, "not needed") {
		t.Errorf("read-only: %+v", r.checks)
	}
}
