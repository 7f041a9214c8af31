package mcpstdio

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// appendMessage appends msg as JSON-RPC. A successful response's result
// comes from go-sdk's json.Marshal (jsonrpc2.NewResponse), so it is
// already compact, valid JSON with no newline: it is copied as it is,
// where jsonrpc.EncodeMessage would scan and compact it again. Anything
// else (errors, requests, notifications, ids that need escaping) goes
// through jsonrpc.EncodeMessage.
func appendMessage(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil && len(resp.Result) > 0 && bytes.IndexByte(resp.Result, '\n') < 0 {
		line := slices.Grow(dst, len(resp.Result)+64)
		if line, ok := appendPlainID(append(line, `{"jsonrpc":"2.0","id":`...), resp.ID); ok {
			line = append(line, `,"result":`...)
			line = append(line, resp.Result...)
			return append(line, '}'), nil
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("marshaling message: %w", err)
	}
	if len(dst) == 0 {
		return data, nil
	}
	return append(dst, data...), nil
}

// appendPlainID appends an int64 id, or a string id that needs no escape;
// ok is false for anything else.
func appendPlainID(dst []byte, id jsonrpc.ID) ([]byte, bool) {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case string:
		for i := range len(v) {
			if c := v[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return nil, false
			}
		}
		dst = append(dst, '"')
		dst = append(dst, v...)
		return append(dst, '"'), true
	}
	return nil, false
}
