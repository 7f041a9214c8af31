//go:build !unix

package proxmoxsafe

import "os"

// checkPrivate has no owner or mode to check on this platform: the
// directory's ACL is the operator's to set (docs/SECURITY.md).
func checkPrivate(string, os.FileInfo) error { return nil }
