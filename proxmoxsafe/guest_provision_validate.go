package proxmoxsafe

import (
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

var (
	dnsNameRe     = lazyre.New(DNSNamePattern)
	poolIDRe      = lazyre.New(PoolIDPattern)
	bridgeRe      = lazyre.New(BridgePattern)
	isoVolumeRe   = lazyre.New(ISOVolumePattern)
	tmplVolumeRe  = lazyre.New(TemplateVolumePattern)
	containerIPRe = lazyre.New(ContainerIPPattern)
	gatewayRe     = lazyre.New(GatewayPattern)
	// sshKeyRe is one OpenSSH public key line: a key type, the base64
	// key, an optional comment. Anything else (a private key, a password)
	// is refused.
	sshKeyRe = lazyre.New(`^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) AAAA[A-Za-z0-9+/]+={0,2}( [ -~]*)?$`)
)

// validSSHKeys reports whether s is one or more OpenSSH public keys, one
// per line (empty lines allowed, at least one key).
func validSSHKeys(s string) bool {
	keys := 0
	for l := range strings.SplitSeq(s, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if l == "" {
			continue
		}
		if !sshKeyRe.MatchString(l) {
			return false
		}
		keys++
	}
	return keys > 0
}

// provisionProblems say in plain words what the provision rules want.
var provisionProblems = map[string]string{
	"pve_dnsname":    "must be a DNS name (labels of letters, digits and '-', separated by dots; no label starts or ends with '-')",
	"pve_poolid":     "must be a Proxmox pool id (letters, digits, '.', '_' or '-')",
	"pve_bridge":     "must be a bridge name (letters, digits, '.', '_' or '-', at most 15 characters), e.g. vmbr0",
	"pve_isovolume":  "must be an ISO image volume id, storage:iso/<file>.iso (or .img)",
	"pve_tmplvolume": "must be a container template volume id, storage:vztmpl/<file>.tar.zst (or .tar.gz, .tar.xz, .tar.bz2)",
	"pve_ctip":       "must be dhcp or an IPv4 address with prefix length, e.g. 192.0.2.10/24",
	"pve_ipv4":       "must be an IPv4 address",
	"pve_sshkeys":    "must be OpenSSH public keys, one per line (type, base64 key, optional comment); private keys and passwords are never accepted",
	"linked_storage": "is not allowed for a linked clone (Proxmox refuses it: a linked clone's disks stay on the template's storage)",
	"gw_static_only": "needs a static ip (with ip=dhcp the gateway comes from DHCP)",
}

// registerProvision adds the provision formats and cross-field rules to v.
func registerProvision(v *validator.Validate, must func(error)) {
	re := func(tag string, r *lazyre.Regexp) {
		must(v.RegisterValidation(tag, func(fl validator.FieldLevel) bool { return r.MatchString(fl.Field().String()) }))
	}
	re("pve_dnsname", dnsNameRe)
	re("pve_poolid", poolIDRe)
	re("pve_bridge", bridgeRe)
	re("pve_isovolume", isoVolumeRe)
	re("pve_tmplvolume", tmplVolumeRe)
	re("pve_ctip", containerIPRe)
	re("pve_ipv4", gatewayRe)
	must(v.RegisterValidation("pve_sshkeys", func(fl validator.FieldLevel) bool { return validSSHKeys(fl.Field().String()) }))
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		in := sl.Current().Interface().(CloneGuestInput)
		if in.Linked && in.Storage != "" {
			sl.ReportError(in.Storage, "storage", "Storage", "linked_storage", "")
		}
	}, CloneGuestInput{})
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		in := sl.Current().Interface().(CreateContainerInput)
		if in.Gateway != "" && in.IP == "dhcp" {
			sl.ReportError(in.Gateway, "gateway", "Gateway", "gw_static_only", "")
		}
	}, CreateContainerInput{})
}
