package proxmoxtest

import "time"

// haPending is a state change requested from the HA manager that the guest
// has not reached yet: real hastart/hastop tasks only ask the CRM, and the
// LRM performs the start/stop some seconds later.
type haPending struct {
	running bool      // target state
	left    int       // status/current reads that still show the old state
	due     time.Time // with HADelay: when the LRM carries it out (left unused)
}

// haDelay resolves the HADelayPolls option: 0 = default 2, -1 = immediate.
func (s *Server) haDelay() int {
	switch {
	case s.HADelayPolls == 0:
		return 2
	case s.HADelayPolls < 0:
		return 0
	}
	return s.HADelayPolls
}

// requestHA records the HA request for g; s.mu must be held for writing.
func (s *Server) requestHA(g *Guest, running bool) {
	g.HAState = map[bool]string{true: "started", false: "stopped"}[running]
	if g.HACRMState != "" {
		// error, migrate, fence, …: the manager records the request and
		// does nothing with it now.
		return
	}
	p := &haPending{running: running, left: s.haDelay()}
	if s.HADelay > 0 {
		p.left, p.due = 0, time.Now().Add(s.HADelay)
		s.haPending[g.VMID] = p
		return
	}
	if p.left == 0 {
		applyPower(g, running)
		delete(s.haPending, g.VMID)
		return
	}
	s.haPending[g.VMID] = p
}

// advanceHA counts one status/current read of g; s.mu must be held for
// writing.
func (s *Server) advanceHA(g *Guest) {
	p := s.haPending[g.VMID]
	if p == nil || !p.due.IsZero() { // timed: finishDueHA carries it out
		return
	}
	if p.left > 0 {
		p.left--
		return
	}
	applyPower(g, p.running)
	delete(s.haPending, g.VMID)
}

// applyPower sets the run state and the usage numbers that go with it.
func applyPower(g *Guest, running bool) {
	g.Paused = false
	if running {
		if g.Status != "running" {
			applyPending(g) // a start applies the pending config (vm_start)
			g.Status = "running"
			g.Uptime = 1
			g.Mem = g.MaxMem / 4
			g.CPU = 0.02
		}
		return
	}
	g.Status = "stopped"
	g.Uptime = 0
	g.Mem = 0
	g.CPU = 0
}

// finishDueHA carries out the timed HA requests (HADelay) that are due;
// s.mu must be held for writing.
func (s *Server) finishDueHA(now time.Time) {
	for vmid, p := range s.haPending {
		if p.due.IsZero() || now.Before(p.due) {
			continue
		}
		if g := s.cluster.guest(vmid); g != nil {
			applyPower(g, p.running)
		}
		delete(s.haPending, vmid)
	}
}
