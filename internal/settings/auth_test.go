package settings

import (
	"slices"
	"testing"
)

// TestAuthMethod: any password setting means a password login, any token
// setting a token; Parse refuses both (TestConfigMessages and the
// command's TestPasswordSettings check the messages).
func TestAuthMethod(t *testing.T) {
	t.Parallel()
	if c := (&Config{Realm: "pam"}); !c.usesPassword() || c.usesToken() {
		t.Error("a realm alone means a password login")
	}
	if c := (&Config{TokenSecretFile: "/x"}); c.usesPassword() || !c.usesToken() {
		t.Error("a secret file alone means a token")
	}
}

// TestMissing: every unset required setting, each with the line its check
// prints; none in the demo or when all are set.
func TestMissing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want []string
	}{
		{nil, []string{msgURLRequired, msgTokenIDRequired, msgSecretRequired}},
		{[]string{"PVE_URL", "https://pve:8006"}, []string{msgTokenIDRequired, msgSecretRequired}},
		{[]string{"PVE_API_TOKEN_ID", "a@pve!t"}, []string{msgURLRequired, msgSecretRequired}},
		{[]string{"PVE_PASSWORD", "pw"}, []string{msgURLRequired, msgUsernameRequired}},
		{[]string{"PVE_URL", "https://pve:8006", "PVE_API_TOKEN_ID", "a@pve!t", "PVE_API_TOKEN_SECRET", "s"}, nil},
	} {
		c, err := Parse([]string{"doctor"}, env(tc.env...))
		if len(tc.want) > 0 && (err == nil || err.Error() != tc.want[0]) {
			t.Errorf("%v: Parse says %v, want the first of %q", tc.env, err, tc.want)
		}
		if got := Missing(c); !slices.Equal(got, tc.want) {
			t.Errorf("%v: Missing %q, want %q", tc.env, got, tc.want)
		}
	}
	if c, _ := Parse([]string{"--demo", "doctor"}, env()); Missing(c) != nil {
		t.Error("the demo needs no Proxmox setting")
	}
}
