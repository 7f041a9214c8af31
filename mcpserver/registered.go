package mcpserver

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk's Server.AddTool replaces a tool of the same name without a word.
// Calling AddTools twice on one server with two clients (one per cluster)
// therefore left every tool bound to the second cluster, and nothing said
// so. This package remembers the names it registered on each server, and
// registering one again panics: like go-sdk's own refusal of a tool
// without an input schema, it is a programmer error, found at start and
// never at the first call. Tools the caller registers with go-sdk directly
// are not seen: go-sdk offers no way to ask a server for its tools.

// registeredTools maps a server (held weakly, so a server that is no
// longer used is collected and its entry removed) to the tool names this
// package registered on it.
var registeredTools sync.Map // weak.Pointer[mcp.Server] → *registeredNames

type registeredNames struct {
	mu    sync.Mutex
	names map[string]bool
}

// claimToolNames records names as registered on server, or panics, before
// anything is registered, when one of them already is.
func claimToolNames(server *mcp.Server, names []string) {
	key := weak.Make(server)
	v, loaded := registeredTools.LoadOrStore(key, &registeredNames{names: make(map[string]bool, len(names))})
	if !loaded {
		runtime.AddCleanup(server, func(k weak.Pointer[mcp.Server]) { registeredTools.Delete(k) }, key)
	}
	tn := v.(*registeredNames)
	tn.mu.Lock()
	defer tn.mu.Unlock()
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if tn.names[n] || seen[n] {
			panic(fmt.Sprintf("mcpserver: the tool %q is already registered on this server; go-sdk would silently replace it", n))
		}
		seen[n] = true
	}
	for _, n := range names {
		tn.names[n] = true
	}
}
