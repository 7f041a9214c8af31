package proxmoxsafe

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkGuardCheck: what the transport guard costs per request now
// that it splits every path and checks the deny list first (a guest
// status read, the most frequent request).
func BenchmarkGuardCheck(b *testing.B) {
	c, _ := gatewayClient(b, false)
	g := c.api.HTTP.Transport.(*guard)
	req, err := http.NewRequest(http.MethodGet, "https://pve.example:8006/api2/json/nodes/pve1/qemu/100/status/current", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := g.check(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShapeAnswer: shaping a /cluster/resources answer of 500
// guests (sanitize, cap, redact by key).
func BenchmarkShapeAnswer(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 500 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id":"qemu/%d","vmid":%d,"name":"guest-%d","node":"pve1","type":"qemu","status":"running","maxmem":4294967296,"mem":1073741824,"cpu":0.05,"tags":"prod;web","uptime":86400}`, 100+i, 100+i, i)
	}
	sb.WriteString("]")
	raw := []byte(sb.String())
	r := &gatewayReq{method: http.MethodGet, segs: []string{"cluster", "resources"}}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		shapeAnswer(r, raw)
	}
}
