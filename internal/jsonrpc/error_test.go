package jsonrpc

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestErrorObject pins the bytes both transports write: the id as sent (a
// number, a string) or null when there is none, the code and the message
// escaped as encoding/json escapes them, and no newline. It reads back as
// it was made, and go-sdk's decoder reads one with an id as a response
// carrying an error.
func TestErrorObject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		id   json.RawMessage
		code int
		msg  string
		want string
	}{
		{"no id", nil, sdk.CodeParseError, "Parse error: the line is not valid JSON",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not valid JSON"}}`},
		{"empty id", json.RawMessage{}, sdk.CodeInvalidRequest, "x",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`},
		{"null id", json.RawMessage("null"), sdk.CodeInvalidRequest, "x",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`},
		{"number id", json.RawMessage("7"), sdk.CodeInvalidRequest, `Invalid Request: "jsonrpc" must be exactly "2.0"`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be exactly \"2.0\""}}`},
		{"string id", json.RawMessage(`"x7"`), sdk.CodeMethodNotFound, `method not found: "foo/<bar>&"` + "\n\x01\u2028",
			`{"jsonrpc":"2.0","id":"x7","error":{"code":-32601,"message":"method not found: \"foo/\u003cbar\u003e\u0026\"\n\u0001\u2028"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ErrorObject(tc.id, tc.code, tc.msg)
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			var back struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("%s is not JSON: %v", got, err)
			}
			if back.JSONRPC != "2.0" || back.Error.Code != tc.code || back.Error.Message != tc.msg {
				t.Errorf("reads back as %+v, want code %d message %q", back, tc.code, tc.msg)
			}
			if string(back.ID) == "null" {
				return // go-sdk reads no response without an id
			}
			msg, err := sdk.DecodeMessage(got)
			if err != nil {
				t.Fatalf("go-sdk cannot read %s: %v", got, err)
			}
			if resp, ok := msg.(*sdk.Response); !ok || resp.Error == nil {
				t.Errorf("go-sdk reads %s as %+v, want a response with an error", got, msg)
			}
		})
	}
}

// TestErrorObjectBadID: an id that is not valid JSON (a caller's bug) is
// answered with id null rather than with no answer at all.
func TestErrorObjectBadID(t *testing.T) {
	t.Parallel()
	got := ErrorObject(json.RawMessage("{"), sdk.CodeInvalidRequest, "x")
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
