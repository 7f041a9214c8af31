package settings

import (
	"os/exec"
	"strings"
	"testing"
)

var completionTools = []string{"list_guests", "guest_power"}

func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var b strings.Builder
	if err := Completion(&b, shell, completionTools); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// completionCases: what a person typed (the last word being completed)
// and words that must, and must not, be offered.
var completionCases = []struct {
	line      string
	want, not []string
}{
	{"proxmox-safe-mcp ", []string{"serve", "tools", "call", "doctor", "approve", "audit", "completion"}, []string{"--profile"}},
	{"proxmox-safe-mcp --prof", []string{"--profile"}, []string{"serve"}},
	{"proxmox-safe-mcp --profile ", []string{"readonly", "safe", "responder", "admin"}, []string{"serve"}},
	{"proxmox-safe-mcp --profile admin ", []string{"tools", "call"}, nil},
	{"proxmox-safe-mcp call ", []string{"list_guests", "guest_power"}, []string{"serve"}},
	{"proxmox-safe-mcp --demo tools gu", []string{"guest_power"}, []string{"list_guests"}},
	{"proxmox-safe-mcp audit ", []string{"verify", "repair"}, nil},
	{"proxmox-safe-mcp completion ", []string{"bash", "zsh", "fish"}, nil},
	{"proxmox-safe-mcp --read-", []string{"--read-only"}, nil},
}

// TestCompletionBash runs the script in bash as its completion system
// would, for each case.
func TestCompletionBash(t *testing.T) {
	t.Parallel()
	testShellCompletion(t, "bash", true, func(line string) []string {
		return []string{"-c", completionScript(t, "bash") + `
read -ra COMP_WORDS <<< "$LINE"; [[ "$LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_proxmox_safe_mcp; printf '%s\n' "${COMPREPLY[@]}"`}
	})
}

// TestCompletionZsh: zsh runs the same function through bashcompinit
// (with bash's 0-based arrays, as bashcompinit runs it). zsh's compgen
// leaves matching the typed prefix to zsh itself, so only what must be
// offered is checked.
func TestCompletionZsh(t *testing.T) {
	t.Parallel()
	testShellCompletion(t, "zsh", false, func(line string) []string {
		// A stand-in compdef, as a .zshrc's compinit defines it (compinit
		// itself takes a minute in a fresh home).
		return []string{"-f", "-c", "compdef() { :; }\n" + completionScript(t, "zsh") + `
setopt ksharrays
COMP_WORDS=(${=LINE}); [[ "$LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_proxmox_safe_mcp; print -rl -- "${COMPREPLY[@]}"`}
	})
}

// TestCompletionFish asks fish itself what it would complete.
func TestCompletionFish(t *testing.T) {
	t.Parallel()
	testShellCompletion(t, "fish", true, func(line string) []string {
		return []string{"--no-config", "-c", completionScript(t, "fish") + "\ncomplete -C\"$LINE\" | string replace -r '\\t.*' ''; true"}
	})
}

func testShellCompletion(t *testing.T, shell string, filters bool, args func(line string) []string) {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("SKIP: %s is not installed, so its completion script cannot be run; install it (CI does)", shell)
	}
	for _, tc := range completionCases {
		cmd := exec.Command(path, args(tc.line)...)
		cmd.Env = []string{"LINE=" + tc.line, "HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", shell, tc.line, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range tc.want {
			if !contains(got, w) {
				t.Errorf("%s %q: %q not offered (got %q)", shell, tc.line, w, got)
			}
		}
		for _, w := range tc.not {
			if !filters {
				break
			}
			if contains(got, w) {
				t.Errorf("%s %q: %q offered (got %q)", shell, tc.line, w, got)
			}
		}
	}
}

func contains(list []string, w string) bool {
	for _, x := range list {
		if x == w {
			return true
		}
	}
	return false
}

// TestCompletionEveryFlag: every flag of the table is in every script,
// so a new setting cannot be left out of completion.
func TestCompletionEveryFlag(t *testing.T) {
	t.Parallel()
	for _, shell := range CompletionShells {
		script := completionScript(t, shell)
		for _, s := range table {
			if s.flag == "" {
				continue
			}
			if want := map[bool]string{true: "-l " + s.flag + " ", false: "--" + s.flag}[shell == "fish"]; !strings.Contains(script, want) {
				t.Errorf("%s: no %q", shell, want)
			}
		}
	}
	if err := Completion(&strings.Builder{}, "tcsh", nil); err == nil || !strings.Contains(err.Error(), `unknown shell "tcsh" (known: bash, zsh, fish)`) {
		t.Errorf("tcsh: %v", err)
	}
}
