// Package textform writes a JSON object as compact, lossless text for a
// model or a person to read, and reads that text back.
//
// A tool result's text content is what many MCP hosts hand the model (they
// drop structuredContent), so it must carry every value; repeating the
// result as JSON costs every key on every row of a list. This form states
// keys once: a table's columns in a header, an object's nested keys as a
// dotted path. Parse(Append(v)) equals v as encoding/json decodes it (with
// UseNumber), for every JSON object, which a test checks over every tool.
//
// The form, line by line (no line is indented, none is empty):
//
//	key: value                   a scalar, or a JSON array or object (see values)
//	key.sub: value               a nested object's member: objects are flattened to dotted paths
//	key: {}                      an empty object (a non-empty one is flattened)
//	key[3]: a,b,c                an array of three scalars, comma-separated
//	key[3]:                      the same as three lines, one value each (long or quoted elements)
//	key[2]{col1	col2.sub	col3[]}:  an array of two objects: a header of tab-separated
//	1	x	a,b                  columns (nested objects flattened to dotted names, []
//	2		c                    marks a column of arrays of scalars), then one row per
//	                             object, its cells tab-separated; an empty cell is an
//	                             absent member
//
// Values (a cell, an element, what follows "key: "):
//
//   - numbers, true, false and null as JSON writes them;
//   - a string bare when it cannot be mistaken for anything else: not empty,
//     no space at either end, no control or line-separator character, not
//     starting with a quote, [ or {, not a number, true, false or null, and
//     (in a list) no comma; any other string is a JSON string in quotes,
//     with control characters, DEL, C1 controls and U+2028/U+2029 escaped.
//     So no value, whatever Proxmox sent, can start a line or a cell;
//   - an array or object a column cannot flatten (arrays of arrays, mixed
//     arrays, an object where other rows have a scalar) as compact JSON,
//     which starts with [ or { and holds no raw control character.
//
// Keys are bare when they are made of ASCII letters, digits, _ and -, and
// JSON strings in quotes otherwise (so a key holding a dot, a colon or a
// tab cannot forge a path or a column).
package textform
