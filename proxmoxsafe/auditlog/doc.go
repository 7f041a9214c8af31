// Package auditlog is the tamper-evident audit log of proxmox-safe-mcp: a
// [proxmoxsafe.AuditSink] that writes one JSON [proxmoxsafe.AuditRecord]
// per line, chains each line to the one before it (HMAC-SHA256 with a
// key, SHA-256 without) and keeps a sealed tail beside the file, plus the
// tools to check and mend such a file.
//
//   - [Open] creates or continues a log file (verifying it first); [New]
//     writes a log to any io.Writer (no seal).
//   - [Verify] checks a stream of lines, [VerifyFile] a file and its seal.
//   - [Repair] removes what an interrupted write leaves (a torn final
//     line, a seal one record behind) and records that it did.
//
// Plug it into the client as its sink:
//
//	log, err := auditlog.Open("/var/lib/proxmox-safe-mcp/audit.jsonl", &auditlog.Options{Key: key})
//	if err != nil { ... }
//	defer log.Close()
//	client, err := proxmoxsafe.New(proxmoxsafe.Config{..., Audit: log})
//
// The line format ([Format]) and the seal file's format are fixed:
// logs written before this package existed verify and continue unchanged.
// docs/SECURITY.md says what the chain and the seal detect and what they
// cannot (a rollback of log and seal together, anything done by someone
// holding the key).
package auditlog
