// Package pve is the low-level Proxmox VE HTTP layer: request building with
// escaped path segments, authentication (API token or ticket), bounded
// body reads, the {"data": …} envelope and Proxmox's error conventions.
package pve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/redact"
)

// DefaultMaxBody bounds every response body read from Proxmox.
const DefaultMaxBody int64 = 16 << 20

// Client talks to one Proxmox VE API endpoint.
type Client struct {
	HTTP *http.Client
	// Base is the API root, e.g. https://pve:8006/api2/json (no trailing slash).
	Base *url.URL
	// Auth puts credentials on every request: [HeaderAuth] for an API
	// token, [*TicketAuth] for a user and password. nil sends none.
	Auth      Authenticator
	UserAgent string
	// MaxBody bounds response bodies; 0 means DefaultMaxBody.
	MaxBody int64
	// Redact removes credentials from everything read from upstream
	// (bodies, reason phrases, transport errors) before it is decoded or
	// returned: a proxy or debug page may echo the request's headers.
	Redact *redact.Redactor
	// Timeout bounds each exchange: sending one request and reading its
	// whole answer, as http.Client.Timeout would (a retry after a 401, and
	// a ticket login, each get their own). Zero: only ctx bounds it.
	//
	// Use this rather than HTTP.Timeout: when the client's Transport is
	// not a *http.Transport (the library wraps it in its route guard),
	// net/http enforces Client.Timeout with a goroutine, a timer and a
	// channel per request; a context deadline costs one timer.
	Timeout time.Duration
}

// Path joins segments into an API path, escaping each one so no value can
// add a segment, a query or a fragment.
func Path(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// Error is a non-2xx answer from Proxmox.
type Error struct {
	Method     string
	Path       string // escaped API path without query
	StatusCode int
	// Reason is the HTTP reason phrase, where Proxmox puts its message.
	Reason string
	// Message is the body's "message" field (PVE 8.3+), trimmed.
	Message string
	// Params is the body's "errors" map of a 400 answer.
	Params map[string]string
	// Reauthenticated is set on a 401 that came back although the request
	// was sent again with credentials obtained after a first 401.
	Reauthenticated bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.StatusCode, e.Text())
}

// Text is the most complete message available: the body's message on newer
// versions, else the reason phrase.
func (e *Error) Text() string {
	if e.Message != "" {
		return e.Message
	}
	return e.Reason
}

// ErrBodyTooLarge is returned when a response exceeds MaxBody.
var ErrBodyTooLarge = errors.New("response body too large")

// Get performs a GET and decodes the "data" member into out (may be nil).
func (c *Client) Get(ctx context.Context, path string, query url.Values, out any) error {
	return c.Do(ctx, http.MethodGet, path, query, out)
}

// Post performs a form-encoded POST and decodes "data" into out.
func (c *Client) Post(ctx context.Context, path string, form url.Values, out any) error {
	return c.Do(ctx, http.MethodPost, path, form, out)
}

// Do sends one request. GET and DELETE put params in the query string; POST
// and PUT send them form-encoded, as Proxmox expects. When Proxmox answers
// 401 and the Authenticator obtains new credentials (a ticket login), the
// request is sent once more: a 401 comes from pveproxy's authentication
// step, before any handler ran, so nothing happened the first time.
func (c *Client) Do(ctx context.Context, method, path string, params url.Values, out any) error {
	return c.do(ctx, method, path, params, out, false)
}

// DoCommitted is [Client.Do] for a request that changes something in
// Proxmox. Until the request has a connection, ctx's cancellation stops
// it and nothing is sent (the error says "not sent" and matches ctx's
// error), with one narrow exception: net/http may still write a request
// whose context ended at the very moment it was handed an idle
// connection; that case is reported as possibly carried out (unsettled),
// never as not sent. From then on the exchange no longer follows ctx's cancellation
// or deadline: it is bounded by Timeout alone ([CommittedTimeout] when
// Timeout is zero), so Proxmox's answer — the task id of what it started
// — is read and returned rather than abandoned with the request already
// on its way. The caller checks ctx itself afterwards. A 401 retry is a
// new request: it is not sent once ctx is done.
func (c *Client) DoCommitted(ctx context.Context, method, path string, params url.Values, out any) error {
	return c.do(ctx, method, path, params, out, true)
}

// CommittedTimeout bounds a [Client.DoCommitted] exchange when Timeout is
// zero: the caller's context no longer does once the request is sent.
const CommittedTimeout = 30 * time.Second

func (c *Client) do(ctx context.Context, method, path string, params url.Values, out any, committed bool) error {
	for attempt := 0; ; attempt++ {
		req, err := c.newRequest(ctx, method, path, params)
		if err != nil {
			return err
		}
		var gen uint64
		if c.Auth != nil {
			// A failed login never sent this request: its error is
			// settled whatever happened to the login itself.
			if gen, err = c.Auth.Authorize(ctx, c, req); err != nil {
				return err
			}
		}
		if committed {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s %s: not sent: %w", method, path, context.Cause(ctx))
			}
		}
		err = c.exchange(req, method, path, out, committed)
		var pe *Error
		if c.Auth == nil || !errors.As(err, &pe) || pe.StatusCode != http.StatusUnauthorized {
			return err
		}
		if attempt > 0 {
			pe.Reauthenticated = true
			return err
		}
		again, aerr := c.Auth.Rejected(ctx, c, gen)
		if aerr != nil {
			return aerr
		}
		if !again {
			return err
		}
	}
}

// exchange sends req and decodes the answer into out; a failure after the
// request was written is marked unsettled (it may have been carried out).
// With committed, req's context stops the exchange only until it has a
// connection (see DoCommitted).
func (c *Client) exchange(req *http.Request, method, path string, out any, committed bool) error {
	ph := &phase{}
	timeout := c.Timeout
	if committed {
		caller := req.Context()
		detached, abort := context.WithCancelCause(context.WithoutCancel(caller))
		// Whichever comes first decides: the connection (the request is
		// being sent and finishes) or the caller's cancellation (nothing
		// is sent).
		stop := context.AfterFunc(caller, func() {
			if ph.commit.CompareAndSwap(commitOpen, commitAborted) {
				abort(context.Cause(caller))
			}
		})
		defer stop()
		defer abort(nil)
		req = req.WithContext(detached)
		if timeout <= 0 {
			timeout = CommittedTimeout
		}
	}
	req, cancel := ph.trace(req, timeout)
	defer cancel()
	err := c.send(req, method, path, out, ph, true)
	var pe *Error
	if err != nil && ph.written() && !errors.As(err, &pe) {
		return &unsettled{err}
	}
	return err
}

// Login sends POST /access/ticket with form and no credentials, and decodes
// "data" into out. It is the one request whose answer is a credential: a
// successful body is decoded as received (the Redactor would blank the
// CSRF token it carries); error answers are redacted like any other. A
// login changes nothing, so its failures are never unsettled.
func (c *Client) Login(ctx context.Context, form url.Values, out any) error {
	req, err := c.newRequest(ctx, http.MethodPost, LoginPath, form)
	if err != nil {
		return err
	}
	ph := &phase{}
	req, cancel := ph.trace(req, c.Timeout)
	defer cancel()
	return c.send(req, http.MethodPost, LoginPath, out, ph, false)
}

// LoginPath is the API path of the ticket login.
const LoginPath = "/access/ticket"

func (c *Client) newRequest(ctx context.Context, method, path string, params url.Values) (*http.Request, error) {
	u := *c.Base
	unescaped, err := url.PathUnescape(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: invalid path: %w", method, path, err)
	}
	u.Path = strings.TrimSuffix(c.Base.Path, "/") + unescaped
	// Keep the escaped form so an escaped "/" in a segment stays escaped.
	u.RawPath = strings.TrimSuffix(c.Base.EscapedPath(), "/") + path
	var body io.Reader
	switch method {
	case http.MethodGet, http.MethodDelete:
		if len(params) > 0 {
			u.RawQuery = params.Encode()
		}
	default:
		body = strings.NewReader(params.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: building request: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "application/json")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	return req, nil
}

// send performs req and decodes the answer. redactOK=false leaves a
// successful body unredacted (the login answer only).
func (c *Client) send(req *http.Request, method, path string, out any, ph *phase, redactOK bool) error {
	resp, err := c.HTTP.Do(req)
	if err != nil {
		ph.answered = resp != nil // a refused redirect
		return fmt.Errorf("%s %s: %w", method, path, c.Redact.Error(ph.explain(scrubURLError(err)), ErrBodyTooLarge))
	}
	defer func() {
		// Drain a little so the connection can be reused, then close.
		_, _ = io.CopyN(io.Discard, resp.Body, 4096)
		resp.Body.Close()
	}()
	max := c.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	ph.reading()
	data, err := readBody(resp.Body, max+1, resp.ContentLength)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, c.Redact.Error(ph.explain(err), ErrBodyTooLarge))
	}
	if int64(len(data)) > max {
		return fmt.Errorf("%s %s: %w (over %d bytes)", method, path, ErrBodyTooLarge, max)
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if !ok || redactOK {
		data = c.Redact.Bytes(data)
	}
	if !ok {
		return decodeError(method, path, resp, data, c.Redact)
	}
	if out == nil {
		return nil
	}
	if ct := mediaType(resp); ct != "" && ct != "application/json" && !json.Valid(data) {
		// A login page, a proxy's or web server's page: say so rather
		// than "invalid character '<'".
		return fmt.Errorf("%s %s: malformed response: not a Proxmox API answer (Content-Type %s)", method, path, ct)
	}
	if p, ok := out.(*Paged); ok {
		return p.decode(method, path, data)
	}
	if d, ok := out.(*Decoder); ok {
		if d.Decode(data) {
			return nil
		}
		out = d.Data // declined: encoding/json decides, and words any error
	}
	// Decode "data" straight into out (an interface holding a pointer is
	// decoded into): one validation pass over the body instead of two.
	env := struct {
		Data any `json:"data"`
	}{Data: out}
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("%s %s: malformed response: %w", method, path, err)
	}
	if env.Data == nil || !bytes.Contains(data, []byte(`"data"`)) {
		return fmt.Errorf("%s %s: malformed response: no data", method, path)
	}
	return nil
}

func decodeError(method, path string, resp *http.Response, data []byte, red *redact.Redactor) *Error {
	e := &Error{Method: method, Path: path, StatusCode: resp.StatusCode}
	// resp.Status is "<code> <reason>"; Proxmox's message is the reason.
	reason := strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode)))
	e.Reason = red.String(reason)
	var body struct {
		Message string            `json:"message"`
		Errors  map[string]string `json:"errors"`
	}
	if json.Unmarshal(data, &body) == nil {
		e.Message = strings.TrimSpace(body.Message)
		if len(body.Errors) > 0 {
			e.Params = make(map[string]string, len(body.Errors))
			for k, v := range body.Errors {
				e.Params[k] = strings.TrimSpace(v)
			}
		}
	}
	return e
}

// mediaType is the answer's media type, lower case without parameters
// ("" when absent or unparsable), safe to quote in an error.
func mediaType(resp *http.Response) string {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || len(mt) > 64 {
		return ""
	}
	return mt
}

// scrubURLError drops the URL from a *url.Error: it may carry a query string,
// and callers already name method and path.
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
