package pve

import "io"

// readBody reads r to its end but never more than limit bytes, like
// io.ReadAll(io.LimitReader(r, limit)); the caller passes MaxBody+1 so
// that an answer over the bound shows. When the answer announced its
// length (length > 0, under limit) the buffer is allocated once at that
// size: io.ReadAll starts at 512 bytes and grows in steps, then copies
// the pieces into one slice. An answer longer than announced (net/http
// does not let one through) is still read, up to limit.
func readBody(r io.Reader, limit, length int64) ([]byte, error) {
	lr := io.LimitReader(r, limit)
	if length <= 0 || length >= limit {
		return io.ReadAll(lr)
	}
	buf := make([]byte, 0, length+1) // +1: room to see EOF without growing
	for {
		if len(buf) == cap(buf) {
			rest, err := io.ReadAll(lr)
			return append(buf, rest...), err
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
