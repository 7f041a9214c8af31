package proxmoxsafe

import (
	"net/http"
	"net/url"
	"runtime"
	"testing"
)

// defaultTransport is the transport behind the guard of a client built
// with no HTTPClient of its own.
func defaultTransport(t *testing.T) *http.Transport {
	t.Helper()
	pol, err := compilePolicy(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://pve.example:8006/api2/json")
	hc, err := buildHTTPClient(Config{}, base, pol, false)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := hc.Transport.(*guard).next.(*http.Transport)
	if !ok {
		t.Fatalf("transport behind the guard is %T", hc.Transport.(*guard).next)
	}
	return tr
}

// TestDefaultTransportKeepsIdleConnsForFanOut: the default transport keeps
// at least as many idle connections as ClusterStatus sends reads at once,
// whatever GOMAXPROCS is (go-cleanhttp's default is GOMAXPROCS+1: 2 on one
// core, a new TLS handshake per call).
func TestDefaultTransportKeepsIdleConnsForFanOut(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	tr := defaultTransport(t)
	const clusterStatusReads = 3
	if tr.MaxIdleConnsPerHost < clusterStatusReads {
		t.Errorf("MaxIdleConnsPerHost = %d with GOMAXPROCS 1, want at least %d", tr.MaxIdleConnsPerHost, clusterStatusReads)
	}
}

// TestDefaultTransportKeepsIdleConnsForConcurrentClients: an HTTP server
// with 64 sessions calling at once sends 64 requests at once; with fewer
// idle connections kept, most of them close afterwards and the next call
// pays a TLS handshake.
func TestDefaultTransportKeepsIdleConnsForConcurrentClients(t *testing.T) {
	tr := defaultTransport(t)
	const concurrentClients = 64
	if tr.MaxIdleConnsPerHost < concurrentClients {
		t.Errorf("MaxIdleConnsPerHost = %d, want at least %d", tr.MaxIdleConnsPerHost, concurrentClients)
	}
	if tr.MaxIdleConns != 0 && tr.MaxIdleConns < tr.MaxIdleConnsPerHost {
		t.Errorf("MaxIdleConns = %d caps MaxIdleConnsPerHost = %d", tr.MaxIdleConns, tr.MaxIdleConnsPerHost)
	}
}
