package settings

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// httpToken is a valid MCP bearer token for the tests.
const httpToken = "mcp-test-token-0123456789abcdef0123456789abcdef"

// operatorSecret is a valid approval-page secret for the tests.
const operatorSecret = "operator-test-secret-0123456789abcdef"

// httpCanary is a Proxmox token secret no message may show.
const httpCanary = "c4a7a3f1-0bad-4ca5-8eed-0000000ca9a2"
