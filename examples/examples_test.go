// Package examples_test builds every example and runs it with -demo against
// the simulated cluster, so the examples cannot rot.
package examples_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestExamplesDemo(t *testing.T) {
	bin := t.TempDir()
	// One build for all examples: -o to a directory writes one binary per main package.
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./list-and-snapshot", "./embed", "./clone-configure-start")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"list-and-snapshot", []string{"-demo", "-tag", "web", "-snapname", "example-test"}, []string{
			`4 guest(s) tagged "web"`,
			`ok   pve1/qemu/100/example-test (web-01): snapshot "example-test", task OK`,
			`ok   pve2/lxc/201/example-test (proxy)`,
		}},
		{"list-and-snapshot", []string{"-demo", "-tag", "db"}, []string{
			`1 guest(s) tagged "db"`,
			`skip pve1/qemu/102/`, // locked "backup": refused before anything is sent
		}},
		{"clone-configure-start", []string{"-demo", "-yes", "-name", "app-07", "-cores", "6", "-memory", "8192", "-grow", "+10G"}, []string{
			"== clone pve2/qemu/105",
			"approval: APPROVE clone pve2/qemu/105 newid=108 full=1 name=app-07",
			"ok:       clone of pve2/qemu/105 completed OK: pve2/qemu/108 exists",
			"effect:   change the configuration of VM 108 (app-07) on pve2: cores 2 → 6, memory 2048 → 8192",
			"approval: APPROVE config pve2/qemu/108 cores=6 memory=8192 (levels: phrase)",
			"approval: APPROVE resize pve2/qemu/108 disk=scsi0 size=+10G (levels: phrase)",
			"ok:       resize of pve2/qemu/108 completed OK: scsi0 is 26G",
			"ok:       start of pve2/qemu/108 completed OK: running",
			"done: pve2/qemu/108 (app-07) runs with 6 cores, 8192 MiB",
		}},
		{"embed", []string{"-demo"}, []string{
			"server_policy (readOnly=true)",
			"guest_power", // not enabled: no mutation class in this example
			`"token_id": "automation@pve!mcp"`,
			`"total": `,
		}},
	} {
		t.Run(tc.name+strings.Join(tc.args, "_"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, filepath.Join(bin, tc.name), tc.args...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s %q: %v\nstdout:\n%s\nstderr:\n%s", tc.name, tc.args, err, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if strings.HasPrefix(w, "guest_power") {
					if strings.Contains(stdout.String(), w) {
						t.Errorf("output lists %s although no mutation class is enabled:\n%s", w, stdout.String())
					}
					continue
				}
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, stdout.String())
				}
			}
		})
	}
}
