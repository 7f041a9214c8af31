package pve

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rawServer answers every request with a fixed raw HTTP response, so tests
// control the reason phrase the way Proxmox uses it.
func rawServer(t *testing.T, status, body string) (*httptest.Server, *[]string) {
	t.Helper()
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery+" auth="+r.Header.Get("Authorization"))
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 %s\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", status, len(body), body)
		buf.Flush()
	}))
	t.Cleanup(ts.Close)
	return ts, &seen
}

func newClient(t *testing.T, ts *httptest.Server) *Client {
	t.Helper()
	u, _ := url.Parse(ts.URL + "/api2/json")
	c := &Client{HTTP: ts.Client(), Base: u, Auth: HeaderAuth("PVEAPIToken=u@pve!t=SECRET-CANARY")}
	t.Cleanup(ts.Client().CloseIdleConnections)
	return c
}

func TestDoDecodesData(t *testing.T) {
	t.Parallel()
	ts, seen := rawServer(t, "200 OK", `{"data":{"version":"9.1.1"}}`)
	c := newClient(t, ts)
	var out struct{ Version string }
	if err := c.Get(t.Context(), Path("version"), url.Values{"a": {"b c"}}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Version != "9.1.1" {
		t.Errorf("version = %q", out.Version)
	}
	if want := "GET /api2/json/version?a=b+c auth=PVEAPIToken=u@pve!t=SECRET-CANARY"; (*seen)[0] != want {
		t.Errorf("request = %q, want %q", (*seen)[0], want)
	}
}

func TestDoErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, status, body string
		check              func(t *testing.T, e *Error)
	}{
		{"reason phrase", "500 Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist", `{"data":null}`, func(t *testing.T, e *Error) {
			if e.StatusCode != 500 || e.Text() != "Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist" {
				t.Errorf("got %+v", e)
			}
		}},
		{"400 errors map", "400 Parameter verification failed.", `{"data":null,"errors":{"vmid":"invalid format - value does not look like a valid VM ID\n"}}`, func(t *testing.T, e *Error) {
			if e.Params["vmid"] != "invalid format - value does not look like a valid VM ID" {
				t.Errorf("params = %q", e.Params)
			}
		}},
		{"message field wins", "403 Permission check failed (/vms/100, VM.PowerMgmt)", `{"data":null,"message":"Permission check failed (/vms/100, VM.PowerMgmt)\n"}`, func(t *testing.T, e *Error) {
			if e.Text() != "Permission check failed (/vms/100, VM.PowerMgmt)" {
				t.Errorf("text = %q", e.Text())
			}
		}},
		{"non-JSON body", "502 Bad Gateway", `<html>oops</html>`, func(t *testing.T, e *Error) {
			if e.StatusCode != 502 || e.Reason != "Bad Gateway" {
				t.Errorf("got %+v", e)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := rawServer(t, tc.status, tc.body)
			err := newClient(t, ts).Get(t.Context(), "/x", nil, nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if strings.Contains(err.Error(), "SECRET-CANARY") {
				t.Errorf("error leaks the secret: %v", err)
			}
			tc.check(t, e)
		})
	}
}

func TestDoBoundsBody(t *testing.T) {
	t.Parallel()
	body := `{"data":"` + strings.Repeat("x", 2000) + `"}`
	ts, _ := rawServer(t, "200 OK", body)
	c := newClient(t, ts)
	c.MaxBody = 1000
	var s string
	err := c.Get(t.Context(), "/x", nil, &s)
	if !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("err = %v, want ErrBodyTooLarge", err)
	}
}

func TestDoMalformed(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"data":`, `{"data":null}`, `[]`, `{"data":{"version":5}}`} {
		ts, _ := rawServer(t, "200 OK", body)
		var out struct{ Version string }
		if err := newClient(t, ts).Get(t.Context(), "/x", nil, &out); err == nil {
			t.Errorf("body %s: no error", body)
		}
	}
}

func TestPostSendsForm(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		got <- r.Method + " " + r.Header.Get("Content-Type") + " " + r.PostForm.Encode()
		fmt.Fprint(w, `{"data":"UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:u@pve!t:"}`)
	}))
	t.Cleanup(ts.Close)
	var id string
	if err := newClient(t, ts).Post(t.Context(), "/nodes/pve1/qemu/100/status/start", url.Values{"timeout": {"30"}}, &id); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != "POST application/x-www-form-urlencoded timeout=30" {
		t.Errorf("request = %q", g)
	}
}

func TestTransportErrorHasNoURLQuery(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			bufio.NewReader(c).ReadString('\n')
			c.Close()
		}
	}()
	defer ln.Close()
	u, _ := url.Parse("http://" + addr + "/api2/json")
	c := &Client{HTTP: &http.Client{}, Base: u, Auth: HeaderAuth("PVEAPIToken=u@pve!t=SECRET-CANARY")}
	err = c.Get(t.Context(), "/x", url.Values{"q": {"secretish"}}, nil)
	if err == nil {
		t.Fatal("no error from a dropped connection")
	}
	if strings.Contains(err.Error(), "secretish") || strings.Contains(err.Error(), "SECRET-CANARY") {
		t.Errorf("error leaks query or secret: %v", err)
	}
}

// TestDecoderFallsBack: a Decoder's answer is used when it takes the body;
// when it declines, the body is decoded into Data with encoding/json,
// errors included, as for a plain out value.
func TestDecoderFallsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body, want string
		take, fail bool
	}{
		{`{"data":"upstream"}`, "fast", true, false},
		{`{"data":"upstream"}`, "upstream", false, false},
		{`{"data":5}`, "", false, true},
		{`{"data":null}`, "", false, true},
	} {
		ts, _ := rawServer(t, "200 OK", tc.body)
		var got string
		var seen []byte
		err := newClient(t, ts).Get(t.Context(), "/x", nil, &Decoder{Data: &got, Decode: func(b []byte) bool {
			seen = append(seen, b...)
			if tc.take {
				got = "fast"
			}
			return tc.take
		}})
		if string(seen) != tc.body || got != tc.want || (err != nil) != tc.fail {
			t.Errorf("%s take=%v: got %q, err %v; decoder saw %q", tc.body, tc.take, got, err, seen)
		}
		var plain string
		if perr := newClient(t, ts).Get(t.Context(), "/x", nil, &plain); !tc.take && fmt.Sprint(perr) != fmt.Sprint(err) {
			t.Errorf("%s: error %v, without a Decoder %v", tc.body, err, perr)
		}
	}
}
