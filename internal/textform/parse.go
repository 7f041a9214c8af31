package textform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parse reads text written by Append back into the value encoding/json
// decodes from the original object with UseNumber: map[string]any, []any,
// string, json.Number, bool and nil.
func Parse(text string) (map[string]any, error) {
	root := map[string]any{}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		path, rest, err := splitPath(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		var v any
		var unit string
		unit, rest = readUnit(rest)
		switch {
		case strings.HasPrefix(rest, ": "):
			v, err = parseCell(rest[2:], unit)
		case unit != "":
			err = errors.New("no ': ' after the unit")
		case strings.HasPrefix(rest, "["):
			var n int
			var after string
			n, after, err = count(rest)
			if err != nil {
				break
			}
			switch {
			case strings.HasPrefix(after, ": "): // inline scalars
				v, err = parseList(after[2:], false)
				if l, ok := v.([]any); err == nil && ok && len(l) != n {
					err = fmt.Errorf("%d elements, the count says %d", len(l), n)
				}
			case after == ":": // one scalar a line
				if i+n >= len(lines) {
					return nil, fmt.Errorf("line %d: %d lines announced, %d follow", i+1, n, len(lines)-i-1)
				}
				l := make([]any, n)
				for j := range l {
					if l[j], err = parseValue(lines[i+1+j], false); err != nil {
						return nil, fmt.Errorf("line %d: %w", i+2+j, err)
					}
				}
				v, i = l, i+n
			case strings.HasPrefix(after, "{") && strings.HasSuffix(after, "}:"):
				var cols []column
				if cols, err = parseHeader(after[1 : len(after)-2]); err != nil {
					break
				}
				if i+n >= len(lines) {
					return nil, fmt.Errorf("line %d: %d rows announced, %d lines follow", i+1, n, len(lines)-i-1)
				}
				rows := make([]any, n)
				for j := range rows {
					if rows[j], err = parseRow(cols, lines[i+1+j]); err != nil {
						return nil, fmt.Errorf("line %d: %w", i+2+j, err)
					}
				}
				v, i = rows, i+n
			default:
				err = errors.New("no ':' after the count")
			}
		default:
			err = errors.New("no ': ' after the key")
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if err := set(root, path, v); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return root, nil
}

// splitPath reads the dotted path at the start of s.
func splitPath(s string) (path []string, rest string, err error) {
	for {
		var k string
		if k, s, err = readKey(s); err != nil {
			return nil, "", err
		}
		path = append(path, k)
		if !strings.HasPrefix(s, ".") {
			return path, s, nil
		}
		s = s[1:]
	}
}

// readKey reads one key, bare or quoted.
func readKey(s string) (k, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		q, rest, err := readQuoted(s)
		if err != nil {
			return "", "", err
		}
		return q, rest, nil
	}
	i := 0
	for i < len(s) && bareKey(s[i:i+1]) {
		i++
	}
	if i == 0 {
		return "", "", fmt.Errorf("no key at %q", trim(s))
	}
	return s[:i], s[i:], nil
}

// readQuoted reads the JSON string at the start of s.
func readQuoted(s string) (string, string, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			var q string
			if err := json.Unmarshal([]byte(s[:i+1]), &q); err != nil {
				return "", "", err
			}
			return q, s[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("unterminated string %q", trim(s))
}

func count(s string) (int, string, error) {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0, "", errors.New("no ']'")
	}
	n, err := strconv.Atoi(s[1:end])
	if err != nil || n < 1 {
		return 0, "", fmt.Errorf("bad count %q", s[1:end])
	}
	return n, s[end+1:], nil
}

func parseHeader(s string) ([]column, error) {
	var cols []column
	for _, name := range strings.Split(s, "\t") {
		path, rest, err := splitPath(name)
		if err != nil {
			return nil, err
		}
		c := column{path: path}
		c.unit, rest = readUnit(rest)
		switch rest {
		case "":
		case "[]":
			c.list = c.unit == ""
		default:
			return nil, fmt.Errorf("bad column %q", trim(name))
		}
		cols = append(cols, c)
	}
	return cols, nil
}

func parseRow(cols []column, line string) (map[string]any, error) {
	cells := strings.Split(line, "\t")
	if len(cells) != len(cols) {
		return nil, fmt.Errorf("%d cells for %d columns", len(cells), len(cols))
	}
	row := map[string]any{}
	for i, c := range cols {
		if cells[i] == "" {
			continue
		}
		var v any
		var err error
		if c.list {
			v, err = parseList(cells[i], true)
		} else {
			v, err = parseCell(cells[i], c.unit)
		}
		if err != nil {
			return nil, fmt.Errorf("column %d: %w", i+1, err)
		}
		if err := set(row, c.path, v); err != nil {
			return nil, err
		}
	}
	return row, nil
}

// readUnit reads a unit, (GiB), (MiB) or (y/n), at the start of s.
func readUnit(s string) (unit, rest string) {
	for _, u := range []string{unitGiB, unitMiB, unitBool} {
		if strings.HasPrefix(s, "("+u+")") {
			return u, s[len(u)+2:]
		}
	}
	return "", s
}

// parseCell reads a value written in unit.
func parseCell(s, unit string) (any, error) {
	switch unit {
	case unitGiB, unitMiB:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || s[0] < '0' || s[0] > '9' {
			return nil, fmt.Errorf("%q is not a whole number of %s", trim(s), unit)
		}
		shift := 30
		if unit == unitMiB {
			shift = 20
		}
		if n > (1<<64-1)>>shift {
			return nil, fmt.Errorf("%q %s is too large", trim(s), unit)
		}
		return json.Number(strconv.FormatUint(n<<shift, 10)), nil
	case unitBool:
		switch s {
		case "y":
			return true, nil
		case "n":
			return false, nil
		}
		return nil, fmt.Errorf("%q is neither y nor n", trim(s))
	}
	return parseValue(s, false)
}

// parseList reads a,b,c; a cell of a list column may also be a JSON array
// or null.
func parseList(s string, cell bool) (any, error) {
	if cell && (s == "null" || strings.HasPrefix(s, "[")) {
		return parseValue(s, false)
	}
	var l []any
	for {
		var v any
		var err error
		if strings.HasPrefix(s, `"`) {
			var q string
			q, s, err = readQuoted(s)
			v = q
		} else {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				i = len(s)
			}
			v, err = parseValue(s[:i], true)
			s = s[i:]
		}
		if err != nil {
			return nil, err
		}
		l = append(l, v)
		if s == "" {
			return l, nil
		}
		if s[0] != ',' {
			return nil, fmt.Errorf("no ',' at %q", trim(s))
		}
		s = s[1:]
	}
}

// parseValue reads one value: quoted, JSON, a JSON scalar or a bare string.
func parseValue(s string, inList bool) (any, error) {
	switch {
	case s == "":
		return nil, errors.New("empty value")
	case s[0] == '"':
		q, rest, err := readQuoted(s)
		if err == nil && rest != "" {
			err = fmt.Errorf("text after a string: %q", trim(rest))
		}
		return q, err
	case s[0] == '[' || s[0] == '{':
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if dec.More() {
			return nil, fmt.Errorf("text after JSON: %q", trim(s))
		}
		return v, nil
	case s == "true":
		return true, nil
	case s == "false":
		return false, nil
	case s == "null":
		return nil, nil
	case isNumber(s):
		return json.Number(s), nil
	}
	if !bare(s, inList) {
		return nil, fmt.Errorf("%q should be quoted", trim(s))
	}
	return s, nil
}

// set stores v at path in m, making the objects on the way.
func set(m map[string]any, path []string, v any) error {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k]
		if !ok {
			n := map[string]any{}
			m[k] = n
			m = n
			continue
		}
		if m, ok = next.(map[string]any); !ok {
			return fmt.Errorf("%q is both a value and an object", k)
		}
	}
	k := path[len(path)-1]
	if _, dup := m[k]; dup {
		return fmt.Errorf("%q given twice", k)
	}
	m[k] = v
	return nil
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
