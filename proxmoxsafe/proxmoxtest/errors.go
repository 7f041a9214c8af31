package proxmoxtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// apiError is an error the way PVE raises it: an HTTP status, a message that
// becomes the reason phrase, and, for parameter errors, a per-parameter map.
type apiError struct {
	status  int
	message string            // full message; the first line is the reason phrase
	errors  map[string]string // 400 parameter errors
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

// errf is a plain `die` in a handler: HTTP 500 with the message.
func errf(format string, args ...any) *apiError {
	return &apiError{status: http.StatusInternalServerError, message: fmt.Sprintf(format, args...)}
}

// paramErr is raise_param_exc: 400 "Parameter verification failed.".
func paramErr(errs map[string]string) *apiError {
	return &apiError{status: http.StatusBadRequest, message: "Parameter verification failed.", errors: errs}
}

// permErr is raise_perm_exc.
func permErr(path, priv string) *apiError {
	return &apiError{status: http.StatusForbidden, message: fmt.Sprintf("Permission check failed (%s, %s)", path, priv)}
}

// reasonPhrase is what pveproxy puts in the status line: the first line of
// the message; a message with a remaining CR or other control character
// falls back to the standard text (AnyEvent.pm response()).
func reasonPhrase(status int, msg string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	if msg == "" || strings.ContainsFunc(msg, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return http.StatusText(status)
	}
	return msg
}

// errorBody is the JSON body of an error answer: {"data":null}, plus
// "errors" for parameter errors and, from PVE 8.3 (libpve-http-server-perl
// 5.2.0), "message" with the full text and a trailing newline.
func errorBody(e *apiError, withMessage bool) []byte {
	body := map[string]any{"data": nil}
	if len(e.errors) > 0 {
		body["errors"] = e.errors
	}
	if withMessage {
		m := e.message
		if !strings.HasSuffix(m, "\n") {
			m += "\n"
		}
		body["message"] = m
	}
	b, _ := json.Marshal(body)
	return b
}

// setCommonHeaders sets the headers pveproxy sends on every answer.
func setCommonHeaders(h http.Header, now time.Time) {
	date := now.UTC().Format(http.TimeFormat)
	h.Set("Server", "pve-api-daemon/3.0")
	h.Set("Cache-Control", "max-age=0")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", date)
	if h.Get("Content-Type") == "" { // a fault may set its own
		h.Set("Content-Type", "application/json;charset=UTF-8")
	}
}

// writeStatus writes a complete answer. Go's net/http server cannot send a
// custom reason phrase, and PVE puts its error messages exactly there, so
// when the reason differs from the standard text the connection is hijacked
// and the response is written by hand. The hand-written answer carries a
// correct Content-Length and "Connection: close", and the connection is
// closed afterwards, so any HTTP/1.1 client reads it cleanly and simply
// dials again for the next request.
func writeStatus(w http.ResponseWriter, r *http.Request, status int, reason string, body []byte) {
	setCommonHeaders(w.Header(), time.Now())
	if reason == http.StatusText(status) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		// An HTTP/2 or recorder writer: best effort with the standard text.
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	h := w.Header().Clone()
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Connection", "close")
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "HTTP/1.1 %03d %s\r\n", status, reason)
	_ = h.Write(&buf)
	buf.WriteString("\r\n")
	if r.Method != http.MethodHead {
		buf.Write(body)
	}
	writeAll(rw.Writer, buf.Bytes())
}

func writeAll(w *bufio.Writer, b []byte) {
	_, _ = w.Write(b)
	_ = w.Flush()
}
