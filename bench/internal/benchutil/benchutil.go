// Package benchutil holds what the bench commands share: the bearer token
// on every request of an HTTP client, and a process's memory from /proc.
package benchutil

import (
	"fmt"
	"net/http"
	"os"
	"strings"
)

// Bearer returns a RoundTripper that sends "Authorization: Bearer token"
// on every request through next.
func Bearer(token string, next http.RoundTripper) http.RoundTripper {
	return bearer{token, next}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// ProcMem reads VmHWM (peak) and VmRSS (now) of pid from /proc, as the
// kernel prints them ("23456 kB"); "n/a" where /proc is not there.
func ProcMem(pid int) (hwm, rss string) {
	hwm, rss = "n/a", "n/a"
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "VmHWM":
			hwm = strings.TrimSpace(v)
		case "VmRSS":
			rss = strings.TrimSpace(v)
		}
	}
	return
}
