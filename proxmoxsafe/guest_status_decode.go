package proxmoxsafe

import "github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"

// decodeGuestStatus decodes a status/current answer into what encoding/json
// gives for {"data": rawGuestStatusFull}, in one pass that validates the
// whole body and skips the fields the result does not use (ballooninfo,
// blockstat, nics, proxmox-support, …) without building them. encoding/json
// validated the body, then decoded it through reflection: most of a small
// read's decoding cost, for a body of about 1.4 KB of which a third is read.
// It declines (false) what it does not handle exactly as encoding/json
// would, as decodeResources does, and the caller then decodes with
// encoding/json: invalid JSON, a missing, null or repeated "data", a data
// or ha that is not an object, a field of an unexpected type, and keys
// that are escaped, not ASCII, or a known name in another case.
// TestDecodeGuestStatusMatchesEncodingJSON and FuzzDecodeGuestStatus hold
// it to encoding/json's result.
func decodeGuestStatus(body []byte, r *rawGuestStatusFull) bool {
	return decodeData(body, func(s *pve.Scanner) bool {
		return s.Consume('{') && decodeGuestStatusFields(s, r)
	})
}

// guestStatusFields are the keys of rawGuestStatusFull (its json tags,
// the embedded rawGuestStatus's included).
var guestStatusFields = []string{"status", "qmpstatus", "name", "lock", "template", "ha", "uptime",
	"cpu", "cpus", "mem", "maxmem", "disk", "maxdisk", "netin", "netout", "diskread", "diskwrite",
	"agent", "tags", "running-qemu", "running-machine"}

// decodeGuestStatusFields decodes the data object after its '{' into r.
// A repeated key is decoded again over the first, as encoding/json does.
func decodeGuestStatusFields(s *pve.Scanner, r *rawGuestStatusFull) bool {
	return decodeMembers(s, func(key []byte) bool {
		if string(key) == "ha" {
			return decodeGuestHA(s, r)
		}
		v, ok := s.Value()
		if !ok {
			return false
		}
		var err error
		switch string(key) {
		case "status":
			err = r.Status.UnmarshalJSON(v)
		case "qmpstatus":
			err = r.QMPStatus.UnmarshalJSON(v)
		case "name":
			err = r.Name.UnmarshalJSON(v)
		case "lock":
			err = r.Lock.UnmarshalJSON(v)
		case "template":
			err = r.Template.UnmarshalJSON(v)
		case "uptime":
			err = r.Uptime.UnmarshalJSON(v)
		case "cpu":
			err = r.CPU.UnmarshalJSON(v)
		case "cpus":
			err = r.CPUs.UnmarshalJSON(v)
		case "mem":
			err = r.Mem.UnmarshalJSON(v)
		case "maxmem":
			err = r.MaxMem.UnmarshalJSON(v)
		case "disk":
			err = r.Disk.UnmarshalJSON(v)
		case "maxdisk":
			err = r.MaxDisk.UnmarshalJSON(v)
		case "netin":
			err = r.NetIn.UnmarshalJSON(v)
		case "netout":
			err = r.NetOut.UnmarshalJSON(v)
		case "diskread":
			err = r.DiskRead.UnmarshalJSON(v)
		case "diskwrite":
			err = r.DiskWrite.UnmarshalJSON(v)
		case "agent":
			err = r.Agent.UnmarshalJSON(v)
		case "tags":
			err = r.Tags.UnmarshalJSON(v)
		case "running-qemu":
			err = r.RunningQEMU.UnmarshalJSON(v)
		case "running-machine":
			err = r.RunningMachine.UnmarshalJSON(v)
		default:
			if foldsToAny(key, guestStatusFields) {
				return false
			}
		}
		return err == nil
	})
}

// decodeGuestHA decodes the value of "ha": null leaves r.HA as it is, an
// object sets the fields it has (over those of an earlier "ha"), anything
// else is a type error (declined).
func decodeGuestHA(s *pve.Scanner, r *rawGuestStatusFull) bool {
	if s.Peek() == 'n' {
		v, ok := s.Value()
		return ok && string(v) == "null"
	}
	return s.Consume('{') && decodeMembers(s, func(key []byte) bool {
		v, ok := s.Value()
		if !ok {
			return false
		}
		var err error
		switch {
		case string(key) == "managed":
			err = r.HA.Managed.UnmarshalJSON(v)
		case string(key) == "state":
			err = r.HA.State.UnmarshalJSON(v)
		case asciiEqualFold(key, "managed"), asciiEqualFold(key, "state"):
			return false
		}
		return err == nil
	})
}
