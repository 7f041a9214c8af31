package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rawStdio is the built binary on plain pipes, spoken to line by line with
// no MCP client in between, so the test controls every byte.
type rawStdio struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	err   *syncBuffer
}

func startRawStdio(t *testing.T, args ...string) *rawStdio {
	t.Helper()
	r := &rawStdio{t: t, lines: make(chan string, 16), err: &syncBuffer{}}
	r.cmd = exec.Command(binary(t), args...)
	r.cmd.Env = cleanEnv()
	r.cmd.Stderr = r.err
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(r.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		r.in.Close()
		select {
		case <-done:
		case <-time.After(terminateWait):
			r.cmd.Process.Kill()
			<-done
		}
		r.cmd.Wait()
	})
	return r
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("write %q: %v (stderr %s)", line, err, r.err.String())
	}
}

// reply is one JSON-RPC answer.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *rawStdio) next() reply {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.t.Fatalf("stdout closed: the server exited (stderr:\n%s)", r.err.String())
		}
		var rep reply
		if err := json.Unmarshal([]byte(line), &rep); err != nil {
			r.t.Fatalf("stdout line is not JSON-RPC: %q", line)
		}
		return rep
	case <-time.After(terminateWait):
		r.t.Fatalf("no answer (stderr:\n%s)", r.err.String())
	}
	return reply{}
}

// TestStdioInvalidLines feeds the real binary each kind of line that is not
// a valid JSON-RPC message and checks that it answers with the
// specification's error and then still answers a ping: before, go-sdk
// ended the session with exit 1 and no reply.
func TestStdioInvalidLines(t *testing.T) {
	t.Parallel()
	for _, pv := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(pv, func(t *testing.T) {
			t.Parallel()
			r := startRawStdio(t, "--demo")
			r.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + pv + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
			if rep := r.next(); rep.Error != nil || !strings.Contains(string(rep.Result), pv) {
				t.Fatalf("initialize: %+v %s", rep.Error, rep.Result)
			}
			r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for i, tc := range []struct {
				name, line string
				code       int
				id         string
			}{
				{"not JSON", `this is not json`, -32700, "null"},
				{"truncated JSON", `{"jsonrpc":"2.0","id":5,"method":"ping"`, -32700, "null"},
				{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
				{"no jsonrpc", `{"id":"x","method":"ping"}`, -32600, `"x"`},
				{"batch", `[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":9,"method":"ping"}]`, -32600, "null"},
				{"not an object", `42`, -32600, "null"},
				{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
				{"method not a string", `{"jsonrpc":"2.0","id":10,"method":3}`, -32600, "10"},
				{"neither request nor response", `{"jsonrpc":"2.0"}`, -32600, "null"},
			} {
				r.send(tc.line)
				rep := r.next()
				if rep.Error == nil || rep.Error.Code != tc.code || string(rep.ID) != tc.id {
					t.Errorf("%s: got id %s error %+v, want id %s code %d", tc.name, rep.ID, rep.Error, tc.id, tc.code)
				}
				id := 100 + i
				r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
				if rep := r.next(); rep.Error != nil || string(rep.ID) != fmt.Sprint(id) || string(rep.Result) != "{}" {
					t.Fatalf("%s: ping after it: id %s result %s error %+v (stderr:\n%s)", tc.name, rep.ID, rep.Result, rep.Error, r.err.String())
				}
			}
			// Blank lines are not messages: nothing is answered for them.
			r.send("")
			r.send(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
			if rep := r.next(); string(rep.ID) != `"last"` {
				t.Errorf("after a blank line: %+v", rep)
			}
		})
	}
}

// TestStdioLegacyBatch checks that a batch still works on a protocol
// version that allows batches (2025-03-26 and older), and that the built
// binary answers a batch with invalid members as JSON-RPC 2.0 section 6
// says: one error object per invalid member (with its id when readable)
// in the array next to the valid members' answers, three errors for
// [1,2,3], one error (not an array) for an empty array; then it still
// answers a ping. Before, such a batch got one error with id null and its
// valid requests were dropped.
func TestStdioLegacyBatch(t *testing.T) {
	t.Parallel()
	r := startRawStdio(t, "--demo")
	r.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if rep := r.next(); rep.Error != nil {
		t.Fatalf("initialize: %+v", rep.Error)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	select {
	case line := <-r.lines:
		var reps []reply
		if err := json.Unmarshal([]byte(line), &reps); err != nil || len(reps) != 2 || reps[0].Error != nil {
			t.Errorf("batch answer %q", line)
		}
	case <-time.After(terminateWait):
		t.Fatalf("no answer to a legacy batch (stderr:\n%s)", r.err.String())
	}

	for _, tc := range []struct {
		name, line string
		want       []string // "id code" per answer object, code 0 for a result
	}{
		{"mixed", `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"1.0","id":4,"method":"ping"},{"foo":"boo"},` +
			`{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":"five","method":"ping"}]`,
			[]string{"3 0", "4 -32600", "null -32600", "null -32600", `"five" 0`}},
		{"invalid members only", `[1,2,3]`, []string{"null -32600", "null -32600", "null -32600"}},
		{"empty", `[]`, nil},
	} {
		r.send(tc.line)
		var line string
		select {
		case line = <-r.lines:
		case <-time.After(terminateWait):
			t.Fatalf("%s: no answer (stderr:\n%s)", tc.name, r.err.String())
		}
		if tc.want == nil {
			var rep reply
			if err := json.Unmarshal([]byte(line), &rep); err != nil || rep.Error == nil || rep.Error.Code != -32600 || string(rep.ID) != "null" {
				t.Errorf("%s: answer %q, want one Invalid Request error with id null", tc.name, line)
			}
			continue
		}
		var reps []reply
		if err := json.Unmarshal([]byte(line), &reps); err != nil {
			t.Fatalf("%s: answer %q is not an array: %v", tc.name, line, err)
		}
		var got []string
		for _, rep := range reps {
			code := 0
			if rep.Error != nil {
				code = rep.Error.Code
			}
			got = append(got, fmt.Sprintf("%s %d", rep.ID, code))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: answers %q, want %q (line %s)", tc.name, got, tc.want, line)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if rep := r.next(); string(rep.ID) != `"after"` || rep.Error != nil {
		t.Errorf("ping after the batches: %+v", rep)
	}
}

// TestStdioPingAfterMalformedLine: the reported sequence on the built
// binary, many times: initialize, its answer, then
// notifications/initialized, a line that is not JSON and a ping written
// together. Each session answers both the parse error and the ping (the
// reported losses were the reading client's: mcpstdio's
// TestRequestAfterInvalidLineAnswered says why).
func TestStdioPingAfterMalformedLine(t *testing.T) {
	t.Parallel()
	sessions := 25
	if testing.Short() {
		sessions = 3
	}
	for i := range sessions {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := startRawStdio(t, "--demo")
			r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
			if rep := r.next(); rep.Error != nil {
				t.Fatalf("initialize: %+v", rep.Error)
			}
			r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\nthis is not json\n" + `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
			var got []string
			for range 2 {
				rep := r.next()
				code := 0
				if rep.Error != nil {
					code = rep.Error.Code
				}
				got = append(got, fmt.Sprintf("%s %d", rep.ID, code))
			}
			if strings.Join(got, ",") != "null -32700,7 0" {
				t.Errorf("answers %q, want the parse error then the ping's result", got)
			}
		})
	}
}
