package proxmoxsafe

import "time"

// SetTicketClock replaces the clock of a ticket-authenticated client, so
// tests move time forward instead of sleeping.
func SetTicketClock(c *Client, now func() time.Time) { c.ticket.SetClock(now) }
