package proxmoxtest

// The fake's faithfulness tests (schema_test.go, shapes_test.go) check it
// against facts extracted from the Proxmox VE API schema and recorded
// responses into testdata/, so they run, and fail rather than skip, in
// every clone. Regenerate after the reference data or the recordings the
// tests name change:
//
//go:generate go run ./internal/pvefacts
