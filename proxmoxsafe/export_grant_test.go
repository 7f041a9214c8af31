package proxmoxsafe

import "time"

// SetGrantClock replaces a grant store's clock, for expiry tests.
func SetGrantClock(s *GrantStore, now func() time.Time) { s.now = now }
