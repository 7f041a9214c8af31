// Package onetool is the one tool of the cold-start and per-call baselines
// (bench/compare/minimal and bench/compare/floor): list_guests, which does
// what our list_guests does at its core, one keep-alive GET of
// /cluster/resources, decoded, and nothing of this project's safety layers.
package onetool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// In is the tool's input.
type In struct {
	// Path is an API path below /api2/json to GET instead of
	// /cluster/resources?type=vm (e.g. guest_status's
	// /nodes/N/qemu/V/status/current), so a baseline can make the very GET
	// one of our small reads makes; it is still one tool.
	Path string `json:"path,omitempty" validate:"omitempty,startswith=/,max=512"`
}

// Out is the tool's output.
type Out struct {
	// Total is the length of data when it is a list, else 1.
	Total int `json:"total"`
}

// Add registers list_guests on s: a GET of base + in.Path (by default
// /cluster/resources?type=vm) with the Authorization header auth through
// hc, decoded into any. check, when not nil, validates the input first.
func Add(s *mcp.Server, hc *http.Client, base, auth string, check func(any) error) {
	mcp.AddTool(s, &mcp.Tool{Name: "list_guests", Description: "List guests."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			if check != nil {
				if err := check(in); err != nil {
					return nil, Out{}, err
				}
			}
			url := base + "/cluster/resources?type=vm"
			if in.Path != "" {
				url = base + in.Path
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			req.Header.Set("Authorization", auth)
			resp, err := hc.Do(req)
			if err != nil {
				return nil, Out{}, err
			}
			defer resp.Body.Close()
			var body struct {
				Data any `json:"data"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				return nil, Out{}, err
			}
			if resp.StatusCode != http.StatusOK {
				return nil, Out{}, fmt.Errorf("GET %s: %s", url, resp.Status)
			}
			total := 1
			if l, ok := body.Data.([]any); ok {
				total = len(l)
			}
			return nil, Out{Total: total}, nil
		})
}
