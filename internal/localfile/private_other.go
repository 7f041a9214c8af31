//go:build !unix

package localfile

import "os"

// CheckPrivate has no owner or mode to check on this platform: the
// directory's ACL is the operator's to set (docs/SECURITY.md).
func CheckPrivate(string, os.FileInfo) error { return nil }
