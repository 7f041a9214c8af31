package pve

// Scanner walks one JSON text token by token without building anything,
// for decoders of large answers that only want a few fields (the
// 10,000-guest /cluster/resources list): encoding/json validates the whole
// body, then decodes it through reflection, and both passes dominated a
// listing's cost.
//
// It accepts exactly the JSON that encoding/json accepts (RFC 8259; bytes
// of invalid UTF-8 inside strings are let through, as encoding/json does),
// except that it refuses values nested deeper than [MaxScanDepth]. Every
// method reports false when the text is not valid at that point; the
// Scanner is then unusable, and the caller falls back to encoding/json,
// which reports the error in its own words.
type Scanner struct {
	data []byte
	pos  int
}

// MaxScanDepth bounds how deeply a skipped value may nest (encoding/json
// allows 10,000); Proxmox's lists nest two or three levels.
const MaxScanDepth = 256

// NewScanner returns a Scanner at the start of data.
func NewScanner(data []byte) *Scanner { return &Scanner{data: data} }

func (s *Scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// Peek skips whitespace and returns the next byte without consuming it; 0
// at the end of the text.
func (s *Scanner) Peek() byte {
	s.skipSpace()
	if s.pos == len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// Consume skips whitespace and consumes c if it comes next.
func (s *Scanner) Consume(c byte) bool {
	if s.Peek() == c && c != 0 {
		s.pos++
		return true
	}
	return false
}

// End reports whether only whitespace is left.
func (s *Scanner) End() bool {
	s.skipSpace()
	return s.pos == len(s.data)
}

// String scans a string literal and returns it with its quotes, as
// encoding/json hands it to an UnmarshalJSON method; escaped reports
// whether it holds a backslash escape.
func (s *Scanner) String() (lit []byte, escaped, ok bool) {
	if s.Peek() != '"' {
		return nil, false, false
	}
	start := s.pos
	i := s.pos + 1
	for i < len(s.data) {
		if !stringStop[s.data[i]] {
			i++
			continue
		}
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return s.data[start:s.pos], escaped, true
		case c == '\\':
			escaped = true
			if i+1 == len(s.data) {
				return nil, false, false
			}
			switch s.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s.data) {
					return nil, false, false
				}
				for _, h := range s.data[i+2 : i+6] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				i += 6
			default:
				return nil, false, false
			}
		default: // a control character
			return nil, false, false
		}
	}
	return nil, false, false
}

// stringStop marks the bytes a string literal's scan must look at: the
// closing quote, a backslash, and the control characters JSON forbids.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number scans a number literal (RFC 8259 grammar: no leading zeros, no
// leading '+', no bare '.').
func (s *Scanner) number() bool {
	d, i := s.data, s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i == len(d) || !isDigit(d[i]) {
			return false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i == len(d) || !isDigit(d[i]) {
			return false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	s.pos = i
	return true
}

func (s *Scanner) literal(word string) bool {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return false
	}
	s.pos += len(word)
	return true
}

// Value scans one value of any kind and returns its text (no surrounding
// whitespace), as encoding/json hands it to an UnmarshalJSON method.
func (s *Scanner) Value() ([]byte, bool) {
	s.skipSpace()
	start := s.pos
	if !s.value(0) {
		return nil, false
	}
	return s.data[start:s.pos], true
}

func (s *Scanner) value(depth int) bool {
	switch s.Peek() {
	case '"':
		_, _, ok := s.String()
		return ok
	case '{':
		if depth == MaxScanDepth {
			return false
		}
		s.pos++
		if s.Consume('}') {
			return true
		}
		for {
			if _, _, ok := s.String(); !ok || !s.Consume(':') || !s.value(depth+1) {
				return false
			}
			if s.Consume('}') {
				return true
			}
			if !s.Consume(',') {
				return false
			}
		}
	case '[':
		if depth == MaxScanDepth {
			return false
		}
		s.pos++
		if s.Consume(']') {
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			if s.Consume(']') {
				return true
			}
			if !s.Consume(',') {
				return false
			}
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case 0:
		return false
	default:
		return s.number()
	}
}
