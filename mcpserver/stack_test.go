package mcpserver

import (
	"fmt"
	"testing"
)

// BenchmarkDeepCall runs, as go-sdk runs each request, a goroutine per
// call that needs about 24 KiB of stack, with and without growStack at
// its top: without, the stack grows twice with the call's frames on it;
// with, once, while it is shallow.
//
//	go test ./mcpserver -run '^$' -bench DeepCall -benchmem
func BenchmarkDeepCall(b *testing.B) {
	for _, grow := range []bool{false, true} {
		b.Run(fmt.Sprintf("growStack=%t", grow), func(b *testing.B) {
			done := make(chan byte)
			for b.Loop() {
				go func() {
					if grow {
						growStack()
					}
					done <- deepFrames(24)
				}()
				<-done
			}
		})
	}
}

// deepFrames recurses n times with a 1 KiB frame each.
//
//go:noinline
func deepFrames(n int) byte {
	var frame [1 << 10]byte
	frame[n%len(frame)] = byte(n)
	if n == 0 {
		return frame[0]
	}
	return deepFrames(n-1) + frame[n%len(frame)]
}
