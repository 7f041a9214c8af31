package main

import (
	"bufio"
	"flag"
	"fmt"
	"github.com/proxmoxsafe/proxmox-safe-mcp/bench/internal/benchutil"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The abuse modes replay what an adversarial campaign did to the HTTP
// transport with one valid token, to show the bounds hold (figures for
// docs/PERFORMANCE.md; the tests prove the behaviour):
//
//	go run ./bench/httpload -flood-sessions 5000
//	go run ./bench/httpload -slow-bodies 300
var (
	floodSessions = flag.Int("flood-sessions", 0, "instead of the load run: open this many sessions with one token (never closing them) and report how many the server accepted and its RSS")
	serverArgs    = flag.String("server-args", "", "extra flags for the server, e.g. \"--max-sessions 0\" to compare without the cap")
	slowBodies    = flag.Int("slow-bodies", 0, "instead of the load run: open this many authenticated connections that send only part of their body, and report when the server closed them")
)

func abuseRequested() bool { return *floodSessions > 0 || *slowBodies > 0 }

func runAbuse(endpoint, token string, pid int) error {
	if *floodSessions > 0 {
		if err := flood(endpoint, token, pid, *floodSessions); err != nil {
			return err
		}
	}
	if *slowBodies > 0 {
		return slow(endpoint, token, pid, *slowBodies)
	}
	return nil
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"0"}}}`

// flood opens n sessions (initialize only) from 16 workers.
func flood(endpoint, token string, pid, n int) error {
	_, rss0 := benchutil.ProcMem(pid)
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	byStatus := map[int]int{}
	var wg sync.WaitGroup
	next := make(chan struct{})
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initBody))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer "+token)
				status := 0
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				mu.Lock()
				byStatus[status]++
				mu.Unlock()
			}
		}()
	}
	start := time.Now()
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	hwm, rss := benchutil.ProcMem(pid)
	fmt.Printf("session flood: %d initialize requests with one token in %s\n", n, time.Since(start).Round(time.Millisecond))
	fmt.Printf("  answers:     %v (0 = transport error)\n", byStatus)
	fmt.Printf("  server RSS:  before %s, after %s, peak %s\n", rss0, rss, hwm)
	return nil
}

// slow opens n connections that announce a 200-byte body and send 10
// bytes, then waits (up to two minutes) for the server to close each.
func slow(endpoint, token string, pid, n int) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	head := "POST " + u.Path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nAuthorization: Bearer " + token + "\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\""
	type result struct {
		status string
		after  time.Duration
	}
	results := make(chan result, n)
	start := time.Now()
	for range n {
		go func() {
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				results <- result{"dial: " + err.Error(), 0}
				return
			}
			defer conn.Close()
			io.WriteString(conn, head)
			conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
			br := bufio.NewReader(conn)
			line, _ := br.ReadString('\n')
			io.Copy(io.Discard, br)
			results <- result{strings.TrimSpace(line), time.Since(start)}
		}()
	}
	_, rssOpen := benchutil.ProcMem(pid)
	byStatus := map[string]int{}
	var last time.Duration
	for range n {
		r := <-results
		byStatus[r.status]++
		last = max(last, r.after)
	}
	hwm, rss := benchutil.ProcMem(pid)
	fmt.Printf("slow bodies: %d authenticated connections sending 10 of 200 body bytes\n", n)
	fmt.Printf("  answers:     %v\n", byStatus)
	fmt.Printf("  all closed:  %s after the first was opened\n", last.Round(100*time.Millisecond))
	fmt.Printf("  server RSS:  while open %s, after %s, peak %s\n", rssOpen, rss, hwm)
	return nil
}
