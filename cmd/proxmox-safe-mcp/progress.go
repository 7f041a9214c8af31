package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressPrinter shows a waiting call's progress on stderr, so that a
// `call … "wait": true` does not look hung until the end. On a terminal it
// rewrites one status line in place; otherwise (a log file, a pipe, CI) it
// prints one plain line per update, so the record stays readable.
type progressPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	live    bool // stderr is a terminal
	active  bool
	tool    string
	started time.Time
	last    string
	width   int // of the live line, to blank it
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	return &progressPrinter{w: w, live: isTerminal(w)}
}

// isTerminal reports whether w is a character device (a terminal), with
// the standard library only.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progressPrinter) start(tool string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active, p.tool, p.started = true, tool, time.Now()
	p.print("waiting for the task to finish …")
}

// update shows one progress message from the server.
func (p *progressPrinter) update(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.active || msg == "" || msg == p.last {
		return
	}
	p.last = msg
	p.print(msg)
}

// done ends the live line, so what follows starts on a clean line.
func (p *progressPrinter) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active && p.live && p.width > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
	}
	p.active = false
}

func (p *progressPrinter) print(msg string) {
	line := fmt.Sprintf("proxmox-safe-mcp: %s: %s (%s)", p.tool, oneLine(msg), time.Since(p.started).Round(time.Second))
	if !p.live {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := ""
	if n := p.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprint(p.w, "\r"+line+pad)
	p.width = len(line)
}

// oneLine keeps a server message on one line of bounded length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
