package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// A JSON object that repeats a key ({"vmid":100,"vmid":101}) is read one
// way by encoding/json and go-sdk (the last value wins) and the other way
// by readers that keep the first: a log, a client's confirmation or a
// proxy would show another message than the one that is served. The
// transports refuse requests that repeat a key (RepeatedKey with
// skipArguments: the tool arguments are the MCP adapter's, which refuses
// them as invalid input, with an audit record), and the adapter checks the
// arguments with the same scanner.

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

// RepeatedKey reports the first key that appears twice in one object of
// raw, a JSON value, at any depth, with its path ("vmid", "params.a",
// "disks[1].size"). Keys are compared as encoding/json decodes them
// ("vm\u0069d" repeats "vmid"; invalid UTF-8 becomes U+FFFD). With
// skipArguments, the value of params.arguments (a tools/call's tool
// arguments) is not looked into. One pass over the bytes, with no
// allocation for plain ASCII keys and objects of at most linearKeys keys;
// a set beyond, so a huge object costs linear time. It reports nothing
// for text that is not valid JSON where the scan notices (the decoder then
// says what is wrong).
func RepeatedKey(raw []byte, skipArguments bool) (path string, found bool) {
	var frameBuf [8]keyFrame
	var keyBuf [32][]byte
	frames, keys := frameBuf[:0], keyBuf[:0]
	expectKey := false
	// skip > 0: the depth of params.arguments' value, whose keys are not
	// checked; armed: its key was just read.
	skip, armed := 0, false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{':
			frames = append(frames, keyFrame{object: true, first: len(keys)})
			expectKey = true
			if armed {
				skip, armed = len(frames), false
			}
		case '[':
			frames = append(frames, keyFrame{first: len(keys)})
			expectKey = false
			if armed {
				skip, armed = len(frames), false
			}
		case '}', ']':
			if len(frames) == 0 {
				return "", false
			}
			if len(frames) == skip {
				skip = 0
			}
			keys = keys[:frames[len(frames)-1].first]
			frames = frames[:len(frames)-1]
			expectKey = false
			armed = false
		case ',':
			if len(frames) == 0 {
				return "", false
			}
			if top := &frames[len(frames)-1]; top.object {
				expectKey = true
			} else {
				top.index++
			}
			armed = false // the arguments were a number, true, false or null
		case '"':
			end, plain := stringEnd(raw, i)
			if end < 0 {
				return "", false
			}
			armed = false // a string value, or a key
			if expectKey && len(frames) > 0 && skip == 0 {
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
				armed = skipArguments && len(frames) == 2 && frames[0].object && string(frames[0].key) == "params" && string(k) == "arguments"
			} else if expectKey {
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

// RepeatedKeyMessage is the Invalid Request message the transports answer
// a request that repeats the key at path with (path clipped, quoted).
func RepeatedKeyMessage(path string) string {
	if len(path) > 64 {
		path = path[:64] + "..."
	}
	return "Invalid Request: the key " + strconv.Quote(path) + " appears more than once in one object; each key may appear once; the request was not processed"
}
