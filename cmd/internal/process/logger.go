package process

import (
	"fmt"
	"io"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// NewLogger returns a process's logger: funcr's key=value text ("text"), or one JSON object
// a line ("json"), at verbosity v, to w (one write per line, whatever goroutine logs).
func NewLogger(format string, v int, w io.Writer) (logr.Logger, error) {
	lw := &lockedWriter{w: w}
	opts := funcr.Options{Verbosity: v, LogTimestamp: true}
	switch format {
	case "text":
		return funcr.New(func(prefix, args string) {
			if prefix != "" {
				lw.line(prefix + " " + args)
				return
			}
			lw.line(args)
		}, opts), nil
	case "json":
		return funcr.NewJSON(lw.line, opts), nil
	}
	return logr.Logger{}, fmt.Errorf("--log-format %q: want text or json", format)
}

// lockedWriter writes whole lines from any goroutine.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, s+"\n")
}
