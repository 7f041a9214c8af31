//go:build race

package pveid

// raceEnabled: under the race detector sync.Pool drops a quarter of what
// is put back, so regexp's matcher pool misses and every fourth match
// allocates and clears a 32 KB backtracking vector: the exhaustive
// product of TestFunctionsArePatterns takes ~40 s instead of ~0.7 s. The
// functions are pure and run on one goroutine, so the race detector has
// nothing to find there; under -race the test checks every single string
// and a fixed sample of the compositions, and .ci/run runs it without
// -race, exhaustively.
const raceEnabled = true
