package pveid

import (
	"regexp"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFunctionsArePatterns: each function accepts exactly what its pattern
// accepts: every string of up to 4 bytes over an alphabet holding each
// character class the patterns tell apart (both separators, every kind of
// white space RE2's \s covers and one it does not, multi-byte and invalid
// UTF-8), and every USER@REALM!NAME (and USER@REALMNAME) whose parts are short strings of
// such characters, separators included (under -race every 13th of those,
// see race_test.go; .ci/run runs the whole product without -race).
func TestFunctionsArePatterns(t *testing.T) {
	t.Parallel()
	user, name, token := regexp.MustCompile(UserPattern), regexp.MustCompile(NamePattern), regexp.MustCompile(TokenIDPattern)
	userID := regexp.MustCompile(UserIDPattern)
	check := func(s string) {
		if got, want := ValidUser(s), user.MatchString(s); got != want {
			t.Errorf("ValidUser(%q) = %v, pattern %v", s, got, want)
		}
		if got, want := ValidName(s), name.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, pattern %v", s, got, want)
		}
		if got, want := ValidTokenID(s), token.MatchString(s); got != want {
			t.Errorf("ValidTokenID(%q) = %v, pattern %v", s, got, want)
		}
		if got, want := ValidUserID(s), userID.MatchString(s); got != want {
			t.Errorf("ValidUserID(%q) = %v, pattern %v", s, got, want)
		}
	}
	strs := func(alphabet []string, depth int) []string {
		out := []string{""}
		for prev := out; depth > 0; depth-- {
			var next []string
			for _, p := range prev {
				for _, c := range alphabet {
					next = append(next, p+c)
				}
			}
			out, prev = append(out, next...), next
		}
		return out
	}
	for _, s := range strs([]string{"a", "Z", "7", ".", "-", "_", "@", "!", ":", "/", " ", "\t", "\n", "\f", "\r", "\v", "é", "\xff"}, 4) {
		check(s)
	}
	parts := strs([]string{"a", "7", "-", "@", "!", " ", ":", "é"}, 2)
	stride := 1 // every composition
	if raceEnabled {
		stride = 13 // a fixed sample; race_test.go says why and where the whole product runs
	}
	valid, i := 0, 0
	for _, u := range parts {
		for _, r := range parts {
			for _, n := range parts {
				if i++; i%stride != 0 {
					continue
				}
				s := u + "@" + r + "!" + n
				check(s)
				check(u + "@" + r + n)
				if token.MatchString(s) {
					valid++
				}
			}
		}
	}
	if valid == 0 {
		t.Fatal("no valid token id among the combinations")
	}
}

func FuzzTokenID(f *testing.F) {
	token := regexp.MustCompile(TokenIDPattern)
	for _, s := range []string{"automation@pve!mcp", "a@b@pve!mcp", "PVEAPIToken=u@pve!x=secret", "", "@!", "u@pve!m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidTokenID(s), token.MatchString(s); got != want {
			t.Errorf("ValidTokenID(%q) = %v, pattern %v", s, got, want)
		}
	})
}
