package testutil

import "slices"

// LookupEnv returns a lookup over name/value pairs in the shape of
// os.LookupEnv, so that a test of the configuration never touches the
// process's environment.
func LookupEnv(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// readOnlyEnv is a complete, valid read-only environment as name/value
// pairs.
var readOnlyEnv = []string{
	"PVE_URL", "https://pve.example.com:8006",
	"PVE_API_TOKEN_ID", "automation@pve!mcp",
	"PVE_API_TOKEN_SECRET", "11111111-2222-4333-8444-555555555555",
	"PROXMOX_SAFE_READ_ONLY", "true",
}

// ReadOnlyEnv returns a fresh copy of a complete, valid read-only
// environment as name/value pairs, with the pairs kv set over it: a name
// it already holds takes the new value, any other is appended.
func ReadOnlyEnv(kv ...string) []string {
	out := slices.Clone(readOnlyEnv)
	for i := 0; i+1 < len(kv); i += 2 {
		if j := slices.Index(out, kv[i]); j >= 0 && j%2 == 0 {
			out[j+1] = kv[i+1]
		} else {
			out = append(out, kv[i], kv[i+1])
		}
	}
	return out
}
