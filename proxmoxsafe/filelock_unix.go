//go:build unix

package proxmoxsafe

import (
	"errors"
	"os"
	"syscall"
)

// hostLocking reports whether lock files work on this platform.
const hostLocking = true

// tryLock takes an exclusive flock on f without waiting. It reports false
// when another open file description holds it (another process, or another
// open of the same file).
func tryLock(f *os.File) (bool, error) {
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

// unlock releases a lock taken by tryLock.
func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
