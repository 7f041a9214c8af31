package proxmoxtest

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// pinnedClient trusts exactly the certificate with the given fingerprint.
func pinnedClient(fp string) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if got := fingerprintOf(sum[:]); got != fp {
				return errors.New("pin mismatch: " + got)
			}
			return nil
		},
	}}}
}

func fingerprintOf(sum []byte) string {
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

func TestRotateCertificate(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	oldFP := s.Fingerprint()
	old := pinnedClient(oldFP)
	defer old.CloseIdleConnections()
	if resp, err := old.Get(s.URL + "/api2/json/version"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	s.RotateCertificate()
	if s.Fingerprint() == oldFP {
		t.Fatal("fingerprint unchanged")
	}
	// The kept-alive connection was dropped: the old pin fails at once.
	if _, err := old.Get(s.URL + "/api2/json/version"); err == nil || !strings.Contains(err.Error(), "pin mismatch") {
		t.Errorf("old pin after rotation: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CertificatePEM())
	fresh := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer fresh.CloseIdleConnections()
	resp, err := fresh.Get(s.URL + "/api2/json/version")
	if err != nil {
		t.Fatalf("new certificate not served: %v", err)
	}
	resp.Body.Close()
	nodes := get2(t, fresh, s, "/nodes")
	if !strings.Contains(nodes, s.Fingerprint()) {
		t.Error("the local node's ssl_fingerprint is not the new one")
	}
}

// get2 is get with another client.
func get2(t *testing.T, cl *http.Client, s *Server, path string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", s.URL+"/api2/json"+path, nil)
	req.Header.Set("Authorization", defaultAuth)
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestStallHandshakes(t *testing.T) {
	t.Parallel()
	s := NewServer(nil)
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	s.StallHandshakes(true)
	s.StallHandshakes(true) // idempotent
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	cl := &http.Client{Transport: s.Client().Transport.(*http.Transport).Clone()}
	defer cl.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api2/json/version", nil)
	if _, err := cl.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled handshake: %v, want the client's deadline", err)
	}
	s.StallHandshakes(false)
	s.StallHandshakes(false)
	if a := get(t, s, "/version"); a.code != 200 {
		t.Fatalf("after the stall: %s", a.status)
	}
	// A handshake still stalled when the server closes does not keep
	// Close waiting (nor leave a goroutine: goleak in TestMain).
	s.StallHandshakes(true)
	// A fresh client: the first one may keep the connection whose
	// handshake finished in the background once the stall ended.
	cl2 := &http.Client{Transport: s.Client().Transport.(*http.Transport).Clone()}
	defer cl2.CloseIdleConnections()
	done := make(chan error)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api2/json/version", nil)
		resp, err := cl2.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	for s.tls.stalled.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	closed = true
	if err := <-done; err == nil {
		t.Error("a request through a stalled handshake succeeded")
	}
}
