package humantime

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{999 * time.Millisecond, "0s"},
		{42 * time.Second, "42s"},
		{5*time.Minute + 12*time.Second + 900*time.Millisecond, "5m 12s"},
		{5 * time.Minute, "5m"},
		{2*time.Hour + 5*time.Minute + 59*time.Second, "2h 5m"},
		{24 * time.Hour, "1d"},
		{74 * time.Hour, "3d 2h"},
		{16790*time.Hour + 56*time.Minute + 44*time.Second, "699d 14h"},
		{720 * time.Hour, "30d"},
		{-90 * time.Second, "-1m 30s"},
	} {
		if got := Duration(tc.d); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
