package redact

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// maxEscapeDepth bounds how many layers of escaping decodedSegments takes
// off: a JSON body (one), a JSON document quoted in one of its strings
// (two), and one more for an error message quoting that.
const maxEscapeDepth = 3

// decodedSegments redacts what b says once its escapes are decoded. b is
// cut at every unescaped quote; each piece holding a backslash (in JSON,
// the content of a string with an escape: outside strings JSON has none)
// is decoded leniently (unescape), redacted as raw text and, for text
// quoted inside it, again one layer down. A piece whose decoded text
// changed is written back escaped as JSON (appendEscaped), so a body stays
// valid JSON and decodes to the redacted text. A piece that did not
// change is kept byte for byte. b is returned itself when nothing changed.
//
// Why pieces between quotes rather than the whole text decoded at once:
// in JSON they are exactly the strings, and each can be written back on
// its own without a map from decoded offsets to raw ones.
func (r *Redactor) decodedSegments(b []byte, depth int) []byte {
	if depth == 0 {
		return b
	}
	// The usual answer has escapes and no secret: all its decoded pieces,
	// joined by quotes, are checked at once, which costs one pass over
	// them instead of one set of checks per piece. A secret holding a quote
	// may then match across two pieces: a false alarm, settled by the
	// exact pass below.
	var joined []byte
	forEscapedPiece(b, func(start, end int) {
		joined = append(appendUnescaped(joined, b[start:end]), '"')
	})
	if joined == nil || bytes.IndexByte(joined, '\\') < 0 && bytes.Equal(r.raw(joined), joined) {
		return b
	}
	var out []byte // nil until a piece changed
	copied := 0    // b[:copied] is in out
	scratch := joined[:0]
	forEscapedPiece(b, func(start, end int) {
		scratch = appendUnescaped(scratch[:0], b[start:end])
		dec := scratch
		red := r.raw(dec)
		if bytes.IndexByte(red, '\\') >= 0 {
			red = r.decodedSegments(red, depth-1)
		}
		if bytes.Equal(red, dec) {
			return
		}
		out = append(out, b[copied:start]...)
		out = appendEscaped(out, red)
		copied = end
	})
	if out == nil {
		return b
	}
	return append(out, b[copied:]...)
}

// forEscapedPiece calls piece, in order, with the bounds of each run of b
// between unescaped quotes (or b's ends) that holds a backslash.
func forEscapedPiece(b []byte, piece func(start, end int)) {
	start, escaped := 0, false
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++ // the escaped byte, a quote included, is part of the piece
		case '"':
			if escaped {
				piece(start, i)
			}
			start, escaped = i+1, false
		}
	}
	if escaped {
		piece(start, len(b))
	}
}

// unescape decodes the escapes of s the way a reader would read them,
// leniently: JSON's (\" \\ \/ \b \f \n \r \t \uXXXX, surrogate pairs
// joined, a lone surrogate becoming U+FFFD as encoding/json makes it),
// Go's \xHH, and any other backslash dropped before the byte it escapes
// ("\P" reads as "P"), so no escape a decoder or a person would see
// through keeps a secret apart. A trailing backslash stays.
func unescape(s []byte) []byte { return appendUnescaped(nil, s) }

// appendUnescaped is unescape appending to out.
func appendUnescaped(out, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			return append(out, s[i:]...)
		}
		out = append(out, s[i:i+j]...)
		if i += j; i+1 == len(s) {
			return append(out, '\\')
		}
		i++
		switch e := s[i]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'x':
			if v, ok := hexValue(s[i+1:], 2); ok {
				out = append(out, byte(v))
				i += 2
				continue
			}
			out = append(out, e)
		case 'u':
			v, ok := hexValue(s[i+1:], 4)
			if !ok {
				out = append(out, e)
				continue
			}
			i += 4
			ru := rune(v)
			if utf16.IsSurrogate(ru) {
				ru = utf8.RuneError
				if rest := s[i+1:]; len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u' {
					if v2, ok := hexValue(rest[2:], 4); ok {
						if p := utf16.DecodeRune(rune(v), rune(v2)); p != utf8.RuneError {
							ru = p
							i += 6
						}
					}
				}
			}
			out = utf8.AppendRune(out, ru)
		default: // \" \\ \/ and any other: the byte itself
			out = append(out, e)
		}
	}
	return out
}

// hexValue reads n hex digits at the start of s.
func hexValue(s []byte, n int) (uint32, bool) {
	if len(s) < n {
		return 0, false
	}
	var v uint32
	for _, c := range s[:n] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}

// appendEscaped appends s escaped as the content of a JSON string (no
// quotes around it).
func appendEscaped(out, s []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(string(s)) != nil {
		return append(out, Value...) // cannot happen: a string always encodes
	}
	e := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return append(out, e[1:len(e)-1]...)
}
