package settings

// Password (ticket) authentication settings: PVE_USERNAME, PVE_PASSWORD,
// PVE_PASSWORD_FILE and PVE_REALM, the alternative to an API token for
// accounts without two-factor authentication. Tokens stay recommended.

// setPassword is PVE_PASSWORD; like the token secret it has no flag.
func setPassword(c *Config, v string) error {
	c.Password, c.PasswordFrom = Secret{v}, "PVE_PASSWORD"
	return nil
}

// usesPassword reports whether any password setting is present.
func (c *Config) usesPassword() bool {
	return c.Username != "" || !c.Password.Empty() || c.PasswordFile != "" || c.Realm != ""
}

// usesToken reports whether any token setting is present.
func (c *Config) usesToken() bool {
	return c.TokenID != "" || !c.TokenSecret.Empty() || c.TokenSecretFile != ""
}

// checkPasswordConfig checks the password settings, reading the password
// file; called when usesPassword and not usesToken. The library checks the
// rest (user id form, length) with the same words.
func checkPasswordConfig(c *Config) error {
	if c.Username == "" {
		return Errorf("%s", msgUsernameRequired)
	}
	switch {
	case c.PasswordFile != "" && !c.Password.Empty():
		return Errorf("set only one of PVE_PASSWORD and PVE_PASSWORD_FILE (--password-file)")
	case c.PasswordFile != "":
		const name = "PVE_PASSWORD_FILE (--password-file)"
		pw, err := c.readSecretFile(name, c.PasswordFile) // secretfile.go
		if err != nil {
			return Errorf("%s: %v", name, err)
		}
		c.Password, c.PasswordFrom = Secret{pw}, "PVE_PASSWORD_FILE"
	case c.Password.Empty():
		return Errorf("%s", msgPasswordRequired)
	}
	return nil
}

// Missing lists every required setting that is unset, each as the one line
// the first check would print for it (checkConfig stops at the first), so
// doctor can name them all in one run instead of one per run. Nil in
// demo mode, which needs none of them.
func Missing(c *Config) []string {
	if c == nil || c.Demo {
		return nil
	}
	var out []string
	if c.URL == "" {
		out = append(out, msgURLRequired)
	}
	if c.usesPassword() && !c.usesToken() {
		if c.Username == "" {
			out = append(out, msgUsernameRequired)
		}
		if c.Password.Empty() && c.PasswordFile == "" {
			out = append(out, msgPasswordRequired)
		}
		return out
	}
	if c.TokenID == "" {
		out = append(out, msgTokenIDRequired)
	}
	if c.TokenSecret.Empty() && c.TokenSecretFile == "" {
		out = append(out, msgSecretRequired)
	}
	return out
}

// The messages of the required settings, shared by the checks and Missing.
const (
	msgURLRequired      = "PVE_URL (--url) is required, e.g. https://pve1.example.com:8006 (or try --demo, which needs no Proxmox)"
	msgTokenIDRequired  = "PVE_API_TOKEN_ID (--token-id) is required, e.g. automation@pve!mcp (or PVE_USERNAME and PVE_PASSWORD for a password login)"
	msgSecretRequired   = "PVE_API_TOKEN_SECRET or PVE_API_TOKEN_SECRET_FILE (--token-secret-file) is required"
	msgUsernameRequired = "PVE_USERNAME (--username) is required with a password, e.g. root@pam (or an API token instead: PVE_API_TOKEN_ID and PVE_API_TOKEN_SECRET, recommended)"
	msgPasswordRequired = "PVE_PASSWORD or PVE_PASSWORD_FILE (--password-file) is required with PVE_USERNAME"
)
