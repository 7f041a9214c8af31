package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nullArgumentsMiddleware treats `"arguments": null` like `{}`, so a
// malformed call is refused and audited rather than crashing. go-sdk decodes null into a nil map and then panics while applying
// the schema defaults of the mutation tools (wait defaults to false); read
// tools have no defaults and already took null as {}. With this, a
// mutation called with null arguments is refused like one called with {}:
// "invalid input … is required", audited, nothing sent.
func nullArgumentsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ctr, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && ctr.Params != nil &&
			bytes.Equal(bytes.TrimSpace(ctr.Params.Arguments), []byte("null")) {
			ctr.Params.Arguments = json.RawMessage("{}")
		}
		return next(ctx, method, req)
	}
}

// Arguments that repeat a key in one object ({"vmid":100,"vmid":101}) are
// refused as invalid input before anything else looks at them. encoding/json
// and go-sdk keep the last value, other readers the first: a log, a client's
// confirmation dialog or a proxy that reads them the other way would show a
// call other than the one that runs. Keys are compared as JSON decodes
// them, so "vm\u0069d" repeats "vmid".

// repeatedKeyError names the first repeated key, by its path in the
// arguments ("vmid", "params.node", "disks[0].size"). Its message starts
// like go-sdk's argument errors, so SchemaRefusalMiddleware rewrites and
// audits it as it does those.
type repeatedKeyError struct {
	path string
}

func (e *repeatedKeyError) Error() string {
	return fmt.Sprintf("%sthe key %s appears more than once in one object (each key may appear once); no action was taken",
		argumentsPrefix, strconv.Quote(clean(e.path, 64)))
}

// repeatedKeyProblem is the field problem of a repeated key.
const repeatedKeyProblem = "is given more than once in one object: give each key once (JSON readers differ on which value counts)"

// linearKeys is how many keys of one object are compared one by one;
// beyond, the object's keys go into a set, so a huge object costs linear
// time, not quadratic.
const linearKeys = 32

// keyFrame is one open object or array of the scan.
type keyFrame struct {
	object bool
	first  int    // the object's first key in the scan's key list
	key    []byte // the object's current key (for the path)
	index  int    // the array's current element
	set    map[string]struct{}
}

// repeatedKey reports the first key that appears twice in one object of
// raw, at any depth, with its path. One pass over the bytes, with no
// allocation for arguments whose keys are plain ASCII and whose objects
// have at most linearKeys keys. It reports nothing for text that is not
// valid JSON where the scan notices (the decoder then says what is wrong).
func repeatedKey(raw []byte) (path string, found bool) {
	var frameBuf [8]keyFrame
	var keyBuf [32][]byte
	frames, keys := frameBuf[:0], keyBuf[:0]
	expectKey := false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{':
			frames = append(frames, keyFrame{object: true, first: len(keys)})
			expectKey = true
		case '[':
			frames = append(frames, keyFrame{first: len(keys)})
			expectKey = false
		case '}', ']':
			if len(frames) == 0 {
				return "", false
			}
			keys = keys[:frames[len(frames)-1].first]
			frames = frames[:len(frames)-1]
			expectKey = false
		case ',':
			if len(frames) == 0 {
				return "", false
			}
			if top := &frames[len(frames)-1]; top.object {
				expectKey = true
			} else {
				top.index++
			}
		case '"':
			end, plain := stringEnd(raw, i)
			if end < 0 {
				return "", false
			}
			if expectKey && len(frames) > 0 {
				k := raw[i+1 : end]
				if !plain {
					var s string
					if json.Unmarshal(raw[i:end+1], &s) != nil {
						return "", false
					}
					k = []byte(s)
				}
				top := &frames[len(frames)-1]
				top.key = k
				if top.seen(keys[top.first:], k) {
					return keyPath(frames), true
				}
				keys = append(keys, k)
				expectKey = false
			}
			i = end
		}
	}
	return "", false
}

// seen reports whether k is among the object's keys so far (mine), and
// records it in the set once the object has more than linearKeys keys.
func (f *keyFrame) seen(mine [][]byte, k []byte) bool {
	if f.set == nil && len(mine) < linearKeys {
		for _, prev := range mine {
			if bytes.Equal(prev, k) {
				return true
			}
		}
		return false
	}
	if f.set == nil {
		f.set = make(map[string]struct{}, 2*linearKeys)
		for _, prev := range mine {
			f.set[string(prev)] = struct{}{}
		}
	}
	if _, ok := f.set[string(k)]; ok {
		return true
	}
	f.set[string(k)] = struct{}{}
	return false
}

// stringEnd returns the index of the quote that ends the JSON string
// starting at raw[start], or -1, and whether the string needs no decoding
// (printable ASCII without escapes).
func stringEnd(raw []byte, start int) (end int, plain bool) {
	plain = true
	for j := start + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return j, plain
		case c == '\\':
			plain = false
			j++ // the escaped byte (\" included); \uXXXX's digits need no care
		case c < 0x20 || c >= 0x80:
			plain = false
		}
	}
	return -1, false
}

// keyPath is the path of the innermost object's current key.
func keyPath(frames []keyFrame) string {
	var b strings.Builder
	for i, f := range frames {
		switch {
		case f.object && i == 0:
			b.Write(f.key)
		case f.object:
			b.WriteByte('.')
			b.Write(f.key)
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(f.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}
