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
		return Errorf("PVE_USERNAME (--username) is required with a password, e.g. root@pam (or an API token instead: PVE_API_TOKEN_ID and PVE_API_TOKEN_SECRET, recommended)")
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
		return Errorf("PVE_PASSWORD or PVE_PASSWORD_FILE (--password-file) is required with PVE_USERNAME")
	}
	return nil
}
