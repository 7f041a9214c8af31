// Package doctor is the binary's setup check: configuration, TCP
// reachability, TLS trust (the certificate's fingerprint and how to pin
// it), the token or login, the allowed nodes, the audit log serve would
// open, the approval levels in force and the privileges of every enabled
// tool, printed as a report (text, or JSON with --json) whose exit code
// says whether the setup works (0), does not (ExitProblems) or works with
// dangerous privileges it does not need (ExitDangerous). StartupWarnings
// is the privilege part, logged by a server in the background.
//
// It never sends the token to a server whose certificate is not trusted,
// and changes nothing: it only reads.
package doctor
