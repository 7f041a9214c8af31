package mcpstdio

import (
	"bufio"
	"context"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures [NewTransport]. A nil *Options is the zero value.
type Options struct {
	// Logger receives one warning, with the JSON-RPC error code, for each
	// invalid line or batch member the transport answers itself. Nil
	// discards them. Stdout is the protocol: log to stderr or a file.
	Logger *slog.Logger
}

// Transport is an [mcp.Transport] over a reader and a writer that answers
// invalid lines itself and keeps serving (see the package documentation).
type Transport struct {
	in  io.Reader
	out io.Writer
	log *slog.Logger
}

// NewTransport returns a transport that reads newline-delimited JSON-RPC
// from in and writes its answers, one line each, to out, usually
// [os.Stdin] and [os.Stdout]. It panics when in or out is nil. Pass the
// transport to [mcp.Server.Run] or [mcp.Server.Connect], once: the
// connection reads in until it ends.
func NewTransport(in io.Reader, out io.Writer, opts *Options) *Transport {
	if in == nil || out == nil {
		panic("mcpstdio: NewTransport needs a reader and a writer")
	}
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Transport{in: in, out: out, log: log}
}

// Connect starts the line reader and returns the connection. Its Read
// returns io.EOF at the end of input, once every request read has been
// answered, or after Close.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &conn{
		out:      t.out,
		log:      t.log,
		incoming: make(chan inbound),
		closed:   make(chan struct{}),
		answered: make(chan struct{}, 1),
	}
	go c.readLines(bufio.NewReaderSize(t.in, 64*1024))
	return c, nil
}
