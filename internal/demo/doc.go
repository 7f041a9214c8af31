// Package demo runs the binary's --demo: a simulated Proxmox VE cluster
// (proxmoxsafe/proxmoxtest) in the process, over real TLS pinned by
// fingerprint, with a token that holds what the README's quick start
// grants, a temporary audit log and grant directory, and a banner that
// tells a newcomer how to connect a client. It reads no PVE_* variable:
// the demo must never reach a real cluster.
package demo
