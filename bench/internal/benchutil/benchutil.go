// Package benchutil holds what the bench commands share: the bearer token
// on every request of an HTTP client, a process's memory and CPU time
// from /proc, the order in which measured binaries take turns, and the
// median of a run's samples.
package benchutil

import (
	"cmp"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
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
	v := procStatus(pid, "VmHWM", "VmRSS")
	return v[0], v[1]
}

// procStatus returns the values of keys in /proc/PID/status, in order,
// as the kernel prints them; "n/a" for a key not found or without /proc.
func procStatus(pid int, keys ...string) []string {
	vals := make([]string, len(keys))
	for i := range vals {
		vals[i] = "n/a"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return vals
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if i := slices.Index(keys, k); ok && i >= 0 {
			vals[i] = strings.TrimSpace(v)
		}
	}
	return vals
}

// ProcCPU is the CPU time pid's threads have run so far, summed from
// /proc/PID/task/*/schedstat (nanoseconds, unlike the 10 ms ticks of
// /proc/PID/stat); ok is false where /proc is not there. Threads that
// exited are not counted (Go rarely ends one). Differences of it measure
// a server's own work per call, which waiting on a loaded machine does
// not inflate as it does wall time.
func ProcCPU(pid int) (cpu time.Duration, ok bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, false
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			cpu += time.Duration(ns)
		}
	}
	return cpu, true
}

// ProcRSSSplit reads RssAnon (heap, stacks: the process's own) and
// RssFile (pages of the binary and libraries, shared with the page cache)
// of pid from /proc; "n/a" where /proc is not there.
func ProcRSSSplit(pid int) (anon, file string) {
	v := procStatus(pid, "RssAnon", "RssFile")
	return v[0], v[1]
}

// RoundOrder returns the order in which n measured binaries (indices 0 to
// n-1) take their turns in round r (from 0): 0, 1, …, n-1 rotated left by
// r. Over any n consecutive rounds each binary runs once in each position,
// so a cost that falls on a position (the first start of a round finds a
// colder page cache, or a scheduler that has to wake up) is spread over
// all of them instead of always falling on the same one; with a run count
// that is not a multiple of n, the counts differ by at most one.
func RoundOrder(r, n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = (r + k) % n
	}
	return order
}

// Median returns the middle of s (the upper one of the two middles for an
// even count) without reordering s; zero for an empty s.
func Median[T cmp.Ordered](s []T) T {
	if len(s) == 0 {
		var zero T
		return zero
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c[len(c)/2]
}

// LoadAvg is the machine's 1, 5 and 15 minute load averages as
// /proc/loadavg gives them ("?" elsewhere): a figure measured on a busy
// machine says so.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
