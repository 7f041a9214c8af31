package pve

// Decoder is an out value for [Client.Get] with a decoder of its own for
// the answer, tried before encoding/json: a large list whose callers read
// a few fields (/cluster/resources) can be decoded without reflection and
// without validating the body twice.
//
// Decode receives the whole body after the size bound, redaction and the
// content-type check, as encoding/json would. It returns true only with
// the result encoding/json would have given for Data (a differential test
// of the decoder must prove it); it returns false, with Data untouched,
// for anything it does not handle (invalid JSON, an unexpected type or
// spelling), and the body is then decoded into Data with encoding/json as
// for any other out value, errors included. So a Decoder can make an
// answer faster to decode, never accepted where it was refused before.
type Decoder struct {
	// Data receives "data" when Decode declines, like Get's out argument.
	Data any
	// Decode decodes body; see the type's documentation.
	Decode func(body []byte) bool
}
