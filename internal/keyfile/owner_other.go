//go:build !unix

package keyfile

import "os"

// OwnedByMe cannot check an owner on this platform; the file's ACL is the
// operator's to set (docs/CONFIGURATION.md).
func OwnedByMe(string, os.FileInfo) error { return nil }

// ModeBitsAreAccess: elsewhere (Windows) Go makes the mode bits up from
// the read-only attribute, and ACLs decide who may read a file, so the
// loose-file rule says nothing.
const ModeBitsAreAccess = false
