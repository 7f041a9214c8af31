package proxmoxsafe

import "testing"

// TestValidSSHKeys: one or more OpenSSH public key lines (CRLF and empty
// lines allowed); a private key, a password or an empty value is not.
func TestValidSSHKeys(t *testing.T) {
	t.Parallel()
	const ed = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDemoKeyOnly deploy@demo"
	const rsa = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ=="
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{ed, true},
		{ed + "\r\n\n" + rsa + "\n", true},
		{"ecdsa-sha2-nistp256 AAAAE2VjZHNh", true},
		{"", false},
		{"\n\n", false},
		{"-----BEGIN OPENSSH PRIVATE KEY-----", false},
		{"hunter2", false},
		{ed + "\nhunter2", false},
		{"ssh-dss AAAAB3NzaC1kc3M=", false},
		{"ssh-ed25519 AAAAC3Nza\x00C1", false},
	} {
		if got := validSSHKeys(tt.in); got != tt.want {
			t.Errorf("validSSHKeys(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
