package proxmoxsafe_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// staticResources serves a fixed /cluster/resources body captured from a
// 10,000-guest fake, so the benchmark measures this library (HTTP, decode,
// filter, sort, page, sanitize) rather than the fake's rendering.
func staticResources(b *testing.B) *httptest.Server {
	b.Helper()
	fake := proxmoxtest.NewServer(proxmoxtest.GenerateCluster(10, 1000, 1))
	defer fake.Close()
	req, _ := http.NewRequest("GET", fake.URL+"/api2/json/cluster/resources?type=vm", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+proxmoxtest.DefaultTokenID+"="+proxmoxtest.DefaultTokenSecret)
	resp, err := fake.Client().Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("capture: %v %s", err, resp.Status)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.Write(body)
	}))
	b.Cleanup(ts.Close)
	b.SetBytes(int64(len(body)))
	return ts
}

func BenchmarkListGuests10k(b *testing.B) {
	ts := staticResources(b)
	c, err := proxmoxsafe.New(proxmoxsafe.Config{URL: ts.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: "x", AllowInsecureHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("first-page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.ListGuests(b.Context(), proxmoxsafe.ListGuestsInput{})
			if err != nil || res.Total != 10000 || len(res.Guests) != proxmoxsafe.DefaultListLimit {
				b.Fatalf("res %v err %v", res != nil, err)
			}
		}
	})
	b.Run("filtered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.ListGuests(b.Context(), proxmoxsafe.ListGuestsInput{Status: "running", Name: "web", Limit: 1000}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadOverhead compares one NodeStatus call with a bare net/http GET
// of the same endpoint of the same fake (TLS, keep-alive, JSON decode).
func BenchmarkReadOverhead(b *testing.B) {
	fake := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
	b.Cleanup(fake.Close)
	auth := "PVEAPIToken=" + proxmoxtest.DefaultTokenID + "=" + proxmoxtest.DefaultTokenSecret
	b.Run("library-NodeStatus", func(b *testing.B) {
		c, err := proxmoxsafe.New(proxmoxsafe.Config{
			URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
			Fingerprint: fake.Fingerprint(), Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}},
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.NodeStatus(b.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library-NodeStatus-ticket", func(b *testing.B) {
		// The same call with a password login: the ticket cookie instead of
		// the token header (the fake verifies the ticket's signature).
		fake.AddUser("bench@pve", &proxmoxtest.User{Password: "bench password", Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}})
		c, err := proxmoxsafe.New(proxmoxsafe.Config{
			URL: fake.URL, Username: "bench@pve", Password: "bench password",
			Fingerprint: fake.Fingerprint(), Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}},
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.NodeStatus(b.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare-net-http", func(b *testing.B) {
		hc := fake.Client()
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(b.Context(), "GET", fake.URL+"/api2/json/nodes/pve1/status", nil)
			req.Header.Set("Authorization", auth)
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var v struct {
				Data map[string]any `json:"data"`
			}
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				b.Fatal(err, resp.Status)
			}
		}
	})
}
