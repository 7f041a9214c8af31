package proxmoxtest

import (
	"crypto/tls"
	"sync"
	"sync/atomic"
)

// Faults below the HTTP layer: they happen before a request exists, so
// they are not [Fault]s (which match a method and a path) but switches on
// the server.

// tlsFaults holds the handshake stall switch.
type tlsFaults struct {
	mu sync.Mutex
	// release is open while handshakes stall and closed when they may go
	// on; nil when no stall was ever asked for.
	release chan struct{}
	// stalled counts the handshakes waiting now.
	stalled atomic.Int32
}

// RotateCertificate gives the server a fresh self-signed certificate and
// drops every open connection, as `pvenode cert set` does (pveproxy
// restarts with the new certificate). A client pinned to the old
// fingerprint or trusting the old certificate fails on its next
// connection; [Server.Fingerprint], [Server.Certificate] and
// [Server.CertificatePEM] return the new one. [Server.Client] keeps
// trusting the first certificate.
func (s *Server) RotateCertificate() {
	s.id.Store(newIdentity())
	s.ts.CloseClientConnections()
}

// StallHandshakes(true) makes every new TLS handshake hang after the
// client's hello, as a black-holing middlebox or an overloaded pveproxy
// does: the server neither answers nor closes the connection until
// StallHandshakes(false), the client gives up, or the server closes.
// Connections already established are not affected.
func (s *Server) StallHandshakes(stall bool) {
	s.tls.mu.Lock()
	defer s.tls.mu.Unlock()
	open := s.tls.release != nil && !closed(s.tls.release)
	switch {
	case stall && !open:
		s.tls.release = make(chan struct{})
	case !stall && open:
		close(s.tls.release)
	}
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// handshake is the tls.Config.GetConfigForClient hook: it applies a stall
// and serves the current certificate.
func (s *Server) handshake(hello *tls.ClientHelloInfo) (*tls.Config, error) {
	s.tls.mu.Lock()
	release := s.tls.release
	s.tls.mu.Unlock()
	if release != nil {
		s.tls.stalled.Add(1)
		defer s.tls.stalled.Add(-1)
		select {
		case <-release:
		case <-hello.Context().Done():
			return nil, hello.Context().Err()
		case <-s.closing:
			return nil, errServerClosing
		}
	}
	cfg := s.ts.TLS.Clone()
	cfg.GetConfigForClient = nil
	cfg.Certificates = []tls.Certificate{s.id.Load().cert}
	return cfg, nil
}
