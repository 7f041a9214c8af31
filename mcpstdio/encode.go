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
	if resp, ok := plainResult(msg); ok {
		line := slices.Grow(dst, len(resp.Result)+64)
		if line, ok := appendResultHead(line, resp); ok {
			line = append(line, resp.Result...)
			return append(line, resultTail...), nil
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

// plainResult returns msg as a successful response whose result can be
// written as it is (see appendMessage), if it is one.
func plainResult(msg jsonrpc.Message) (*jsonrpc.Response, bool) {
	resp, ok := msg.(*jsonrpc.Response)
	return resp, ok && resp.Error == nil && len(resp.Result) > 0 && bytes.IndexByte(resp.Result, '\n') < 0
}

// appendResultHead appends what precedes the result of resp, a
// plainResult, on its line; ok is false when its id needs escaping
// (jsonrpc.EncodeMessage then writes it). The line ends with the result
// and resultTail.
func appendResultHead(dst []byte, resp *jsonrpc.Response) ([]byte, bool) {
	dst, ok := appendPlainID(append(dst, `{"jsonrpc":"2.0","id":`...), resp.ID)
	if !ok {
		return nil, false
	}
	return append(dst, `,"result":`...), true
}

const resultTail = "}"

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
