package proxmoxsafe

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/localfile"
)

// lockGuest takes the host-wide lock of a guest (Config.LockDir): an
// exclusive, non-blocking flock on LockDir/guest-<vmid>.lock. The kernel
// drops the lock when the process exits, however it exits, so a crashed
// server never leaves a guest locked. Lock files are never removed:
// removing one while another process opens it would let two processes
// lock two different files of the same name.
//
// The name holds only the VMID, which is unique within a cluster. Two
// clusters managed from one host can therefore refuse each other's
// mutations of equal VMIDs at the same moment: a harmless false conflict,
// never a missed one.
func (c *Client) lockGuest(vmid int) (unlockFn func(), err error) {
	if c.lockDir == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(c.lockDir, 0o700); err != nil {
		return nil, refuse(ErrPrecondition, "the host-wide lock directory cannot be created (%v)", err)
	}
	path := filepath.Join(c.lockDir, "guest-"+strconv.Itoa(vmid)+".lock")
	f, _, err := localfile.OpenRegular(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, refuse(ErrPrecondition, "the host-wide lock of guest %d cannot be opened (%v)", vmid, err)
	}
	ok, err := localfile.TryLock(f)
	switch {
	case err != nil:
		f.Close()
		return nil, refuse(ErrPrecondition, "the host-wide lock of guest %d cannot be taken (%v)", vmid, err)
	case !ok:
		f.Close()
		return nil, refuse(ErrPrecondition, "guest %d is being changed by another process on this host (lock %s is held); wait for it to finish", vmid, path)
	}
	return func() {
		// Closing the file releases the flock; unlock first for clarity.
		_ = localfile.Unlock(f)
		if cerr := f.Close(); cerr != nil {
			c.log.Warn("closing a guest lock file", "path", path, "error", fmt.Sprint(cerr))
		}
	}, nil
}
