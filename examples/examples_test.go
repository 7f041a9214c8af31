// Package examples_test builds every example and runs it with -demo against
// the simulated cluster, so the examples cannot rot.
package examples_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// cleanExecEnv, when set, makes the test binary the -exec program of
// `go run`: it runs the example binary it is given with only PATH and
// HOME in its environment (see runClean).
const cleanExecEnv = "EXAMPLES_TEST_CLEAN_EXEC"

func TestMain(m *testing.M) {
	if os.Getenv(cleanExecEnv) != "" {
		os.Exit(runClean(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

// runClean runs args[0] with args[1:] and an environment of only PATH and
// HOME, so an example sees no PVE_* or other configuration of the shell
// that ran the tests; it returns the exit code to exit with.
func runClean(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func TestExamplesDemo(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(self, `'"`) {
		t.Fatalf("the test binary's path %q has a quote: go run's -exec cannot name it", self)
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
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			// go run, not go build -o: the build cache keeps the
			// executables go run links, so a warm run links nothing (a
			// build into a new directory linked all three every time).
			cmd := exec.CommandContext(ctx, "go", append([]string{"run", "-exec", "'" + self + "'", "./" + tc.name}, tc.args...)...)
			cmd.Env = append(os.Environ(), cleanExecEnv+"=1")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			// The context kills go run only: the -exec wrapper and the
			// example it started keep the output pipes open, and Run would
			// wait for them (a hung example would hang the test past its
			// bound). WaitDelay closes the pipes and returns.
			cmd.WaitDelay = 5 * time.Second
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
