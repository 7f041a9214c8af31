package proxmoxsafe

import (
	"net/url"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// hostPathParam matches the parameters whose value names a volume a guest
// gets or is made from: a VM's disks (ide, sata, scsi, virtio, unused,
// efidisk0, tpmstate0, and cdrom, Proxmox's alias of ide2), a container's
// root file system, the template a container is created from and the
// archive a guest is restored from.
// Mount points (mp*) are forbidden by name (forbiddenWriteParam).
var hostPathParam = lazyre.New(`(?i)^((ide|sata|scsi|virtio|unused)\d+|efidisk0|tpmstate0|cdrom|rootfs|ostemplate|archive)$`)

// checkHostPaths refuses a gateway write that hands a guest a path on the
// node: a disk or root file system that is a host block device or file
// (scsi1=/dev/sda, rootfs=volume=/srv/data), a disk imported from a host
// file (import-from=/root/x.qcow2), a container made from a host file
// (ostemplate=/etc/…). Proxmox allows arbitrary file system paths to
// root@pam only ("only root can pass arbitrary filesystem paths", its
// volume access check), so logged in as root@pam by password (a token's
// user is root@pam!name) the write would put the host's disks or files
// inside a guest: host passthrough, as hostpci and usb are, which the
// gateway never sends. A storage volume
// (local-lvm:vm-101-disk-0, local:iso/x.iso) is not a path and passes.
// Every comma-separated item is checked: the bare first one is the volume,
// and file=, volume= and import-from= name one too.
func checkHostPaths(vals url.Values) error {
	for _, k := range sortedKeys(vals) {
		if !hostPathParam.MatchString(k) {
			continue
		}
		for _, item := range strings.Split(vals.Get(k), ",") {
			key, v, named := strings.Cut(item, "=")
			if !named {
				v = key
			} else if key != "file" && key != "volume" && key != "import-from" {
				continue
			}
			// Quotes too: a quoted value ("/dev/sda") is no storage
			// volume, and a parser that unquotes would see a path.
			if p := strings.TrimLeft(v, " \t\n\"'"); strings.HasPrefix(p, "/") {
				return refuse(ErrNotAllowed, "parameter %s names a path on the node (%s…): a host block device or file given to a guest is host passthrough, which Proxmox allows to root@pam only, and the gateway never sends it (use a storage volume such as local-lvm:vm-101-disk-0); nothing was sent", k, firstSegment(p))
			}
		}
	}
	return nil
}

// firstSegment is the start of an absolute path up to its second slash
// ("/dev/"), enough to say what was refused without quoting a whole path.
func firstSegment(p string) string {
	p = strings.TrimSpace(p)
	if i := strings.IndexByte(p[1:], '/'); i >= 0 {
		return p[:i+2]
	}
	return p
}
