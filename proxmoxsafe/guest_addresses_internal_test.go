package proxmoxsafe

import "testing"

// TestAddressReadsReuseConnections: the reads GuestAddresses sends at once
// fit in the idle keep-alive connections the client keeps, so a page of
// guests reuses connections instead of a TLS handshake per read.
func TestAddressReadsReuseConnections(t *testing.T) {
	t.Parallel()
	if MaxAddressReadsAtOnce > minIdleConnsPerHost || MaxAddressReadsPerNode > MaxAddressReadsAtOnce {
		t.Errorf("%d reads at once (%d per node), %d idle connections kept", MaxAddressReadsAtOnce, MaxAddressReadsPerNode, minIdleConnsPerHost)
	}
}
