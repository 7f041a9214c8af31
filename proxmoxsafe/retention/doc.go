// Package retention decides which of a guest's snapshots a keep policy
// deletes: [Plan] applies a [Policy] (maximum age, maximum count, the
// autosnap marker) to a snapshot history at a given time and returns every
// snapshot's [Decision] with its [Rule] and reason.
//
// It is pure: no I/O, no clock (the caller passes now), deterministic, and
// it imports nothing of this module, so the library's snapshot cleanup and
// the snapshot list's cleanup verdicts can share it, and a caller can plan
// offline over a history it read itself.
package retention
