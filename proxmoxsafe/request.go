package proxmoxsafe

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// maxErrorText caps Proxmox error messages passed on to callers.
const maxErrorText = 512

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.upstreamErr(c.api.Get(ctx, path, query, out))
}

func (c *Client) post(ctx context.Context, path string, form url.Values, out any) error {
	return c.upstreamErr(c.api.Post(ctx, path, form, out))
}

// upstreamErr turns low-level errors into this package's error kinds:
// *APIError for Proxmox answers, the guard's refusal as is, and ErrUpstream
// (still matching context errors) for everything else.
func (c *Client) upstreamErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *pve.Error
	if errors.As(err, &pe) {
		ae := &APIError{Method: pe.Method, Path: pe.Path, StatusCode: pe.StatusCode,
			ticket: c.ticket != nil, relogged: pe.Reauthenticated}
		ae.Message, _ = sanitize.CapLine(pe.Text(), maxErrorText)
		if len(pe.Params) > 0 {
			ae.Params = make(map[string]string, len(pe.Params))
			for k, v := range pe.Params {
				k, _ = sanitize.CapLine(k, 64)
				ae.Params[k], _ = sanitize.CapLine(v, maxErrorText)
			}
			if ae.Message == "" || ae.Message == "Parameter verification failed." {
				ae.Message = "Parameter verification failed: " + formatParams(ae.Params)
			}
		}
		return ae
	}
	var re *RefusalError
	if errors.As(err, &re) {
		return re
	}
	if errors.Is(err, pve.ErrSecondFactor) {
		return secondFactorError(err)
	}
	return fmt.Errorf("%w: %w", ErrUpstream, err)
}

func formatParams(m map[string]string) string {
	s := ""
	for _, k := range sortedKeys(m) {
		if s != "" {
			s += "; "
		}
		s += k + ": " + m[k]
	}
	return s
}
