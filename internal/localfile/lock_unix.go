//go:build unix

package localfile

import (
	"errors"
	"os"
	"syscall"
)

// LockingSupported reports whether lock files work on this platform.
const LockingSupported = true

// TryLock takes an exclusive flock on f without waiting. It reports false
// when another open file description holds it (another process, or another
// open of the same file).
func TryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

// Unlock releases a lock taken by TryLock.
func Unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
