package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// bigCluster is the 10,000-guest cluster of the list_guests row: its
// /cluster/resources?type=vm answer is about 3 MB of JSON.
func bigCluster() *proxmoxtest.Cluster { return proxmoxtest.GenerateCluster(10, 1000, 1) }

// measureBig starts ours against a fake with bigCluster and runs bigList.
func measureBig(ours string, env func(*proxmoxtest.Server, string) []string, o options) ([]row, error) {
	big := proxmoxtest.NewServer(bigCluster())
	defer big.Close()
	sess, err := startSession(ours, env(big, "pve1"))
	if err != nil {
		return nil, err
	}
	defer sess.close()
	return bigList(sess, big, max(o.calls/10, 5))
}

// bigList times list_guests over the 10,000-guest cluster against the bare
// GET + decode of the same answer, n times each, interleaved call by call
// (the order rotating) so that the load of a shared machine hits every
// measure alike; measured one block after the other, a change of load
// between the blocks moved this ratio from 0.4× to 1.2×.
//
// Both sides include the fake's own work: rendering the 10,000 entries as
// JSON, TLS and the transfer on loopback. The bare GET with the body read
// and thrown away shows how much of each figure that is; the GET decoded
// into typed rows with encoding/json (the fields a guest row has) is a
// stricter baseline than decoding into any, which allocates a map per
// guest and is the slowest and most GC-bound of the three.
func bigList(sess *rpc, big *proxmoxtest.Server, n int) ([]row, error) {
	gets, err := upstreamGets(sess, big, "list_guests", map[string]any{})
	if err != nil {
		return nil, err
	}
	// The one listing GET: the server's background privilege check may
	// land in the same window (its /access/permissions read is not the
	// call's).
	i := slices.IndexFunc(gets, func(p string) bool { return strings.HasPrefix(p, "/cluster/resources") })
	if i < 0 {
		return nil, fmt.Errorf("list_guests did not read /cluster/resources: %q", gets)
	}
	gets = gets[i : i+1]
	hc, get := bareGetter(big, 1)
	defer hc.CloseIdleConnections()
	params := map[string]any{"name": "list_guests", "arguments": map[string]any{}}
	var last json.RawMessage
	measures := []func() error{
		func() error {
			res, err := sess.call("tools/call", params)
			last = res
			return checkTool(res, err)
		},
		func() error {
			return get(gets[0], func(r io.Reader) error { var v any; return json.NewDecoder(r).Decode(&v) })
		},
		func() error {
			return get(gets[0], func(r io.Reader) error { _, err := io.Copy(io.Discard, r); return err })
		},
		func() error {
			return get(gets[0], func(r io.Reader) error { var v typedList; return json.NewDecoder(r).Decode(&v) })
		},
	}
	times := make([][]time.Duration, len(measures))
	for i := range n + 2 { // the first two rounds warm up
		for k := range measures {
			m := (i + k) % len(measures)
			t0 := time.Now()
			if err := measures[m](); err != nil {
				return nil, err
			}
			if i >= 2 {
				times[m] = append(times[m], time.Since(t0))
			}
		}
	}
	ours := median(times[0])
	var res struct {
		Structured json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(last, &res); err != nil {
		return nil, err
	}
	fmt.Printf("list_guests over 10,000 guests, %d rounds interleaved: the page is %.1f KiB of JSON (bound 64 KiB each copy), the result with its text copy %.1f KiB\n",
		n, float64(len(res.Structured))/1024, float64(len(last))/1024)
	return []row{
		{what: "list_guests over 10,000 guests / bare GET + decode into any", ours: ours, base: median(times[1]), target: 1.2},
		{what: "— / bare GET + decode into typed rows (encoding/json)", ours: ours, base: median(times[3]), target: 0},
		{what: "— / bare GET, body read and dropped (the fake rendering 3 MB, TLS)", ours: ours, base: median(times[2]), target: 0},
	}, nil
}

// typedList is the envelope and the fields of a guest row, as a client
// decoding /cluster/resources with encoding/json into structs would have it.
type typedList struct {
	Data []struct {
		Type     string  `json:"type"`
		VMID     int     `json:"vmid"`
		Name     string  `json:"name"`
		Node     string  `json:"node"`
		Status   string  `json:"status"`
		Template int     `json:"template"`
		Lock     string  `json:"lock"`
		Tags     string  `json:"tags"`
		HAState  string  `json:"hastate"`
		CPU      float64 `json:"cpu"`
		MaxCPU   int     `json:"maxcpu"`
		Mem      uint64  `json:"mem"`
		MaxMem   uint64  `json:"maxmem"`
		Disk     uint64  `json:"disk"`
		MaxDisk  uint64  `json:"maxdisk"`
		Uptime   int64   `json:"uptime"`
		Pool     string  `json:"pool"`
	} `json:"data"`
}

// bareGetter returns a keep-alive client of the fake (conns idle
// connections) and a GET of an API path whose answer read consumes.
func bareGetter(fake *proxmoxtest.Server, conns int) (*http.Client, func(p string, read func(io.Reader) error) error) {
	pool := x509.NewCertPool()
	pool.AddCert(fake.Certificate())
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: max(conns, 2)}}
	auth := "PVEAPIToken=" + proxmoxtest.DefaultTokenID + "=" + proxmoxtest.DefaultTokenSecret
	return hc, func(p string, read func(io.Reader) error) error {
		req, _ := http.NewRequest(http.MethodGet, fake.URL+"/api2/json"+p, nil)
		req.Header.Set("Authorization", auth)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		err = read(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %d %v", p, resp.StatusCode, err)
		}
		return nil
	}
}
