// Package toolcard shows a tool as a person at a terminal reads it: the
// binary's `tools` listing and `tools TOOL` card (parameters with their
// type and limits, the approval phrase, the privileges, a runnable
// example built from the schema), the `tools --json` entry, and the
// nearest tool name for a typo.
package toolcard
