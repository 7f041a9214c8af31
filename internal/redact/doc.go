// Package redact is the one place that decides what is a secret and hides
// it, for the library (proxmoxsafe) and its HTTP client (internal/pve):
//
//   - [SecretName]: whether a name (a guest config key, a member of a
//     gateway answer, a gateway write parameter) names a secret, by the one
//     list of secret words;
//   - [SecretArgs]: the values of secret-looking arguments in free text
//     (task logs, strings of gateway answers), by the same list;
//   - [HoldsTicket]: whether a value holds a Proxmox ticket;
//   - [Redactor]: the configured credentials by value and any token header,
//     ticket cookie or CSRF token by pattern, in everything read from
//     upstream, both as it is and as it reads once its escapes are
//     decoded (so no JSON escaping hides a secret).
//
// Each replaces what it hides by [Value]. It imports nothing of this
// module above it (only internal/lazyre).
package redact
