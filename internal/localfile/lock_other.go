//go:build !unix

package localfile

import "os"

// LockingSupported reports whether lock files work on this platform: flock is
// not available here, so Config.LockDir is refused and an audit log file
// must have one writer (docs/SECURITY.md).
const LockingSupported = false

func TryLock(*os.File) (bool, error) { return true, nil }

func Unlock(*os.File) error { return nil }
