package proxmoxsafe

import (
	"context"
	"time"
)

// OpVersion is the name of [Client.Version].
const OpVersion Operation = "Version"

// versionOp declares [Client.Version].
var versionOp = operation{info: OperationInfo{
	Name:   OpVersion,
	Method: "GET",
	Route:  "/version",
}}

// VersionResult is what [Client.Version] returns.
type VersionResult struct {
	// Version is the pve-manager version, e.g. "9.1.1".
	Version string `json:"version"`
	// Release is major.minor, e.g. "9.1".
	Release string `json:"release"`
}

// Version reads GET /version, which any valid token may call: the first
// request of a setup check, telling a rejected token (ErrUnauthorized)
// apart from missing privileges, which Permissions then details.
func (c *Client) Version(ctx context.Context) (*VersionResult, error) {
	start := time.Now()
	var raw rawVersion
	if err := c.get(ctx, "/version", nil, &raw); err != nil {
		return nil, c.logged(ctx, "Version", start, err)
	}
	c.logged(ctx, "Version", start, nil)
	return &VersionResult{Version: line(string(raw.Version), 64), Release: line(string(raw.Release), 16)}, nil
}
