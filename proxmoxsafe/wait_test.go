package proxmoxsafe_test

import (
	"errors"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestWaitTimeoutClamped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *proxmoxsafe.Config) { c.MaxWait = 2 * time.Second })
	if got := e.client.MaxWait(); got != 2*time.Second {
		t.Fatalf("MaxWait = %v", got)
	}
	in := powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart)
	in.Wait = fastVerify()
	in.Wait.Timeout = time.Hour
	r, err := e.client.GuestPower(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if o := r.Outcome; o.Timeout != 2*time.Second || !o.TimeoutClamped || o.Status != proxmoxsafe.OutcomeCompleted {
		t.Errorf("outcome = %+v", o)
	}

	// The default 30 s above a smaller cap is clamped without blaming the caller.
	e = newEnv(t, func(c *proxmoxsafe.Config) { c.MaxWait = 2 * time.Second })
	in.Wait.Timeout = 0
	r, err = e.client.GuestPower(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if o := r.Outcome; o.Timeout != 2*time.Second || o.TimeoutClamped {
		t.Errorf("outcome = %+v", o)
	}
}

func TestMaxWaitConfig(t *testing.T) {
	t.Parallel()
	base := proxmoxsafe.Config{URL: "https://pve:8006", TokenID: "a@pve!tok", TokenSecret: "s"}
	c, err := proxmoxsafe.New(base)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxWait() != proxmoxsafe.DefaultMaxWait {
		t.Fatalf("default MaxWait = %v", c.MaxWait())
	}
	for _, d := range []time.Duration{-time.Second, 500 * time.Millisecond, 2 * time.Hour} {
		cfg := base
		cfg.MaxWait = d
		_, err := proxmoxsafe.New(cfg)
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || ce.Field != "MaxWait" {
			t.Errorf("MaxWait %v: err = %v", d, err)
		}
	}
}
