package proxmoxtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestFaultHeaders(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	s.InjectFault(Fault{Path: "/version", Status: 502, Body: []byte("<html>Bad Gateway</html>"),
		Header: http.Header{"content-type": {"text/html"}}, Times: 1})
	s.InjectFault(Fault{Method: "POST", Status: 307, Header: http.Header{"Location": {"https://elsewhere.example/"}}, Times: 1})
	resp, body, err := raw(t, s, "GET", "/version")
	if err != nil || resp.StatusCode != 502 || resp.Header.Get("Content-Type") != "text/html" || string(body) != "<html>Bad Gateway</html>" {
		t.Errorf("HTML page: %v %v %q %v", resp, resp.Header, body, err)
	}
	// A client that follows no redirect sees the 307 and its Location.
	cl := *s.Client()
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL+"/api2/json/nodes/pve1/qemu/100/status/stop", nil)
	req.Header.Set("Authorization", defaultAuth)
	resp, err = cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 307 || resp.Header.Get("Location") != "https://elsewhere.example/" {
		t.Errorf("redirect: %s Location %q", resp.Status, resp.Header.Get("Location"))
	}
}

func TestFaultEndlessBody(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	s.InjectFault(Fault{Path: "/version", Endless: true})
	req, _ := http.NewRequestWithContext(t.Context(), "GET", s.URL+"/api2/json/version", nil)
	req.Header.Set("Authorization", defaultAuth)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != -1 {
		t.Errorf("Content-Length %d, want none", resp.ContentLength)
	}
	const want = 8 << 20 // more than any sane limit, and it keeps coming
	n, err := io.CopyN(io.Discard, resp.Body, want)
	if n != want || err != nil {
		t.Errorf("read %d bytes of an endless body: %v", n, err)
	}
	// Closing the body ends the stream; goleak (TestMain) checks the
	// server's goroutine ends too.
}

func TestFaultGiganticBodyIsStreamed(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	const size = 64 << 20
	s.InjectFault(Fault{Path: "/version", BodySize: size, Times: 1})
	req, _ := http.NewRequestWithContext(t.Context(), "GET", s.URL+"/api2/json/version", nil)
	req.Header.Set("Authorization", defaultAuth)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, 9)
	if _, err := io.ReadFull(resp.Body, head); err != nil || string(head) != `{"data":"` {
		t.Fatalf("head %q %v", head, err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if resp.ContentLength != size || n+9 != size || err != nil {
		t.Errorf("Content-Length %d, read %d: %v", resp.ContentLength, n+9, err)
	}
}

func TestFaultTrickle(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	normal := get(t, s, "/version").raw
	s.InjectFault(Fault{Path: "/version", Trickle: time.Millisecond, Times: 1})
	resp, body, err := raw(t, s, "GET", "/version")
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, normal) {
		t.Fatalf("trickled answer %v %q %v, want the normal %q", resp, body, err, normal)
	}
	// The headers come at once and the body does not: the client giving
	// up ends a slow trickle mid-body. The client gives up only once the
	// headers are in: a deadline set before the request (100 ms, once)
	// could pass before a loaded machine had served the headers.
	s.InjectFault(Fault{Path: "/version", Trickle: time.Hour, Times: 1})
	ctx, giveUp := context.WithCancelCause(t.Context())
	defer giveUp(nil)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api2/json/version", nil)
	req.Header.Set("Authorization", defaultAuth)
	resp, err = s.Client().Do(req)
	if err != nil {
		t.Fatalf("no headers while the body trickles: %v", err)
	}
	defer resp.Body.Close()
	// The wait only gives a whole body (a broken trickle) time to arrive
	// and fail the test; a working trickle fails the read whenever it ends.
	errGaveUp := errors.New("the client gave up")
	time.AfterFunc(100*time.Millisecond, func() { giveUp(errGaveUp) })
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, errGaveUp) {
		t.Errorf("reading a stalled trickle: %v, want the client's giving up", err)
	}
}

// A delayed request whose client leaves gets no answer. The client here
// sends TLS close_notify and keeps reading, which is what net/http's
// transport does for a moment when its timeout fires (tls.Conn.Close sends
// the alert before closing the socket): an answer sent then was returned
// to it as a success, turning the fault matrix's "slow headers" row into a
// normal answer now and then under load. What the request asked for is
// still carried out, as by Proxmox's worker, unless the fault answers in
// its own way.
func TestDelayedRequestAbandonedWhenClientLeaves(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	defer close(hold)
	const shutdown = "/nodes/pve1/qemu/100/status/shutdown"
	for _, tc := range []struct {
		f            Fault
		method, path string
		carriedOut   bool // a qmshutdown task for VM 100 exists afterwards
	}{
		{Fault{Path: "/version", Latency: time.Hour}, "GET", "/version", false},
		{Fault{Path: "/version", Hold: hold}, "GET", "/version", false},
		{Fault{Path: "/version", Status: 500, Hold: hold}, "GET", "/version", false},
		{Fault{Path: shutdown, Latency: time.Hour}, "POST", shutdown, true},
		{Fault{Path: shutdown, Hold: hold}, "POST", shutdown, true},
		{Fault{Path: shutdown, Status: 500, Latency: time.Hour}, "POST", shutdown, false},
		{Fault{Path: shutdown, Drop: true, Hold: hold}, "POST", shutdown, false},
	} {
		s := newDemo(t)
		s.InjectFault(tc.f)
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(s.CertificatePEM())
		conn, err := tls.Dial("tcp", strings.TrimPrefix(s.URL, "https://"), &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(conn, "%s /api2/json%s HTTP/1.1\r\nHost: pve\r\nAuthorization: %s\r\n"+
			"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 0\r\n\r\n", tc.method, tc.path, defaultAuth); err != nil {
			conn.Close()
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); len(s.Requests()) == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) { // a bound for a hung test, not a timing assertion
				conn.Close()
				t.Fatalf("%s %s, fault %+v: the request never reached the fake", tc.method, tc.path, tc.f)
			}
		}
		if err := conn.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		got, err := io.ReadAll(conn)
		conn.Close()
		if len(got) > 0 || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s %s, fault %+v: after the client left: %q, %v; want the connection closed without an answer", tc.method, tc.path, tc.f, got, err)
		}
		// The connection closed after the handler ran to its end.
		started := false
		for _, task := range s.Tasks() {
			started = started || task.Type == "qmshutdown" && task.ID == "100"
		}
		if started != tc.carriedOut {
			t.Errorf("%s %s, fault %+v: shutdown task started = %v, want %v", tc.method, tc.path, tc.f, started, tc.carriedOut)
		}
	}
}
