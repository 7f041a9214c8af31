//go:build !race

package pveid

// raceEnabled: see race_test.go.
const raceEnabled = false
