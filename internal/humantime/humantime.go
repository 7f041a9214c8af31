package humantime

import (
	"strconv"
	"time"
)

// Duration returns d in its two largest units of days, hours, minutes and
// seconds ("3d 2h", "2h 5m", "5m 12s", "42s"), rounded down to the
// smaller unit shown; under a second it is "0s", and a negative d is
// written with a leading "-". A day is 24 hours: this is an age, not a
// calendar.
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
	units := []struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	for i, u := range units {
		if d < u.size && i < len(units)-1 {
			continue
		}
		n := d / u.size
		out := strconv.FormatInt(int64(n), 10) + u.name
		if i+1 < len(units) {
			next := units[i+1]
			if m := (d - n*u.size) / next.size; m > 0 {
				out += " " + strconv.FormatInt(int64(m), 10) + next.name
			}
		}
		return out
	}
	return "0s"
}
