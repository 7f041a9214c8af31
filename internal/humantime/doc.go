// Package humantime writes a duration the way a person reads an age or a
// time left: "3d 2h", "5m 12s", not Go's "74h0m0s" or "16790h56m44s".
package humantime
