package grant

import "time"

// SetClock replaces a store's clock, for expiry tests.
func SetClock(s *Store, now func() time.Time) { s.now = now }
