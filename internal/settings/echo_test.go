package settings

import (
	"strings"
	"testing"
)

// A value pasted into a setting by mistake (a whole file, a log) must not
// come back whole in the error: the error would bury its own advice. Every
// setting, flag and environment variable alike, gets a 60 KB value that no
// setting accepts; the error, whatever it says, stays short.
func TestErrorsClipEchoedValues(t *testing.T) {
	long := "x:" + strings.Repeat("\u00e9!", 30_000) // not a number, path, URL, duration or name
	const limit = 2048
	for _, s := range table {
		if s.boolean && s.env == "" {
			continue // a flag that takes no value cannot be given one
		}
		if s.env != "" {
			_, err := Parse(nil, env(with(s.env, long)...))
			if err != nil && len(err.Error()) > limit {
				t.Errorf("%s=<60 KB>: error is %d bytes, want at most %d: %.200s…", s.env, len(err.Error()), limit, err)
			}
		}
		if s.flag != "" && !s.boolean {
			_, err := Parse([]string{"--" + s.flag, long}, env(base...))
			if err != nil && len(err.Error()) > limit {
				t.Errorf("--%s <60 KB>: error is %d bytes, want at most %d: %.200s…", s.flag, len(err.Error()), limit, err)
			}
		}
	}
}
