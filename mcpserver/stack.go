package mcpserver

// go-sdk runs each request on a new goroutine, whose stack starts at
// 8 KiB (the runtime's adaptive start is an average over every goroutine,
// most of them small and idle). A tools/call then needs about 20–30 KiB
// (the middleware, argument validation, the library's HTTP exchange over
// TLS, the result's JSON and text form), so the stack grew two or three
// times per call, each time copied with every frame then on it walked and
// adjusted: about 145,000 instructions of a small read's 1.13 million
// (callgrind: go run ./bench/compare -only instructions). Growing it once,
// at the top of the call where few frames are on it, to a size the whole
// call fits in, leaves that copy and at most one go-sdk's own decoding of
// the request may cause before: about 33,000.

// callStackReserve is the stack a tools/call is given room for up front:
// with growStack's frame on top of what is already in use, the runtime
// doubles the 8 KiB start until both fit, to 32 KiB. A call that needs
// more still grows as before.
const callStackReserve = 16 << 10

// stackIndex keeps growStack's frame from being optimized away: the
// compiler cannot know which byte is read.
var stackIndex = 0

// growStack makes the calling goroutine's stack at least
// callStackReserve larger than what it uses now, at the cost of one copy
// of its current frames.
//
//go:noinline
func growStack() byte {
	var frame [callStackReserve]byte
	return frame[stackIndex]
}
