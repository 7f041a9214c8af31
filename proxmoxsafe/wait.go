package proxmoxsafe

import (
	"context"
	"time"
)

// WaitOptions tunes every wait of this package: [Client.WaitTask],
// [Client.Verify] and the Wait field of [GuestPowerInput] and
// [SnapshotGuestInput]. The zero value (and nil) waits up to
// [DefaultWaitTimeout], polling at once, then after 50 ms, each pause half
// again as long as the one before, up to 2 s: most tasks of a guest end
// within a second, and the answer comes at most one pause after the task
// ended (and a read of the result), while a long task costs one status
// read per 2 s.
type WaitOptions struct {
	// Timeout bounds the whole wait; zero means [DefaultWaitTimeout]. A
	// value above the operator's cap ([Config.MaxWait]) is clamped to the
	// cap, not refused: the caller asked to wait "up to" that long.
	Timeout time.Duration `validate:"min=0"`
	// Interval is the first pause between polls; zero means 50 ms. The
	// pause grows by half each poll up to MaxInterval (zero means 2 s).
	Interval    time.Duration `validate:"min=0"`
	MaxInterval time.Duration `validate:"min=0"`
	// OnProgress, when set, is called after every poll, on the waiting
	// goroutine: it must return quickly and must not call back into the
	// wait. Adapters forward it (e.g. as MCP progress notifications).
	OnProgress func(Progress) `json:"-"`
}

// Polling pace when WaitOptions leaves it zero.
const (
	defaultPollInterval    = 50 * time.Millisecond
	defaultMaxPollInterval = 2 * time.Second
)

// waitOptions validates opts and fills in the defaults (not the timeout,
// which effectiveTimeout resolves against the operator's cap).
func (c *Client) waitOptions(opts *WaitOptions) (WaitOptions, error) {
	var o WaitOptions
	if opts != nil {
		o = *opts
	}
	if err := c.check(o); err != nil {
		return WaitOptions{}, err
	}
	if o.Interval == 0 {
		o.Interval = defaultPollInterval
	}
	if o.MaxInterval == 0 {
		o.MaxInterval = defaultMaxPollInterval
	}
	return o, nil
}

// MaxWait returns the operator's cap on any wait: [Config.MaxWait], or
// [DefaultMaxWait] when that is zero.
func (c *Client) MaxWait() time.Duration { return c.maxWait }

// checkMaxWait resolves [Config.MaxWait] for New.
func checkMaxWait(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultMaxWait, nil
	case d < time.Second || d > MaxMaxWait:
		return 0, configError("MaxWait", "MaxWait must be between 1s and %s (got %s)", MaxMaxWait, d)
	}
	return d, nil
}

// effectiveTimeout applies the default and the operator's cap.
func (c *Client) effectiveTimeout(requested time.Duration) (d time.Duration, clamped bool) {
	d = requested
	if d <= 0 {
		d = DefaultWaitTimeout
	}
	max := c.maxWait
	if max <= 0 {
		max = DefaultMaxWait // a Client not built by New
	}
	if d > max {
		// A default above a small operator cap is not the caller's doing.
		return max, requested > 0
	}
	return d, false
}

// backoff paces the polls of every wait: the first poll at once, then the
// interval, growing by half up to a maximum.
type backoff struct {
	next, max time.Duration
	first     bool
}

func newBackoff(interval, max time.Duration) *backoff {
	return &backoff{next: interval, max: max, first: true}
}

// wait sleeps until the next poll and reports false when ctx ended first.
// It stops its timer before returning, so nothing outlives the wait.
func (b *backoff) wait(ctx context.Context) bool {
	if b.first {
		b.first = false
		return ctx.Err() == nil
	}
	t := time.NewTimer(b.pause())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// pause returns the next pause and grows the one after it.
func (b *backoff) pause() time.Duration {
	p := b.next
	b.next = min(b.next+b.next/2, b.max)
	return p
}
