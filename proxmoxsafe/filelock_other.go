//go:build !unix

package proxmoxsafe

import "os"

// hostLocking reports whether lock files work on this platform: flock is
// not available here, so Config.LockDir is refused and an audit log file
// must have one writer (docs/SECURITY.md).
const hostLocking = false

func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) error { return nil }
