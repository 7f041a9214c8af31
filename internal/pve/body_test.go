package pve

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadBodyBounded: whatever length the answer announces, readBody
// returns what io.ReadAll(io.LimitReader(r, limit)) returns: never more
// than limit bytes, all of a shorter body, and the read error.
func TestReadBodyBounded(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 1, 511, 512, 513, 4095, 4096, 100_000} {
		body := strings.Repeat("x", size)
		for _, limit := range []int64{1, 512, 4097, 100_001, 1 << 20} {
			for _, length := range []int64{-1, 0, 1, int64(size) - 1, int64(size), int64(size) + 1, limit - 1, limit, limit + 1, 1 << 30} {
				for name, r := range map[string]func() io.Reader{
					"whole":    func() io.Reader { return strings.NewReader(body) },
					"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
				} {
					got, err := readBody(r(), limit, length)
					want, _ := io.ReadAll(io.LimitReader(strings.NewReader(body), limit))
					if err != nil || !bytes.Equal(got, want) {
						t.Fatalf("size %d limit %d length %d %s: got %d bytes (%v), want %d", size, limit, length, name, len(got), err, len(want))
					}
				}
			}
		}
	}
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom))
	if got, err := readBody(r, 100, 10); !errors.Is(err, boom) || string(got) != "abc" {
		t.Errorf("read error: got %q, %v", got, err)
	}
}
