package settings

import "testing"

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
