package redisproc

import (
	"bytes"
	"log/slog"
	"sync"
)

// tailSize is how many bytes of redis-server output are kept for errors.
const tailSize = 4 << 10

// output collects redis-server's stdout and stderr. It keeps the last
// tailSize bytes for error messages and, when a logger is set, logs each
// complete line at debug level.
type output struct {
	logger *slog.Logger // may be nil

	mu      sync.Mutex
	tail    []byte
	partial []byte // an incomplete last line waiting for its newline
}

// Write implements io.Writer.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()

	o.tail = append(o.tail, p...)
	if over := len(o.tail) - tailSize; over > 0 {
		o.tail = append(o.tail[:0], o.tail[over:]...)
	}

	if o.logger != nil {
		o.partial = append(o.partial, p...)
		for {
			i := bytes.IndexByte(o.partial, '\n')
			if i < 0 {
				break
			}

			if line := bytes.TrimRight(o.partial[:i], "\r"); len(line) > 0 {
				o.logger.Debug("redis-server", slog.String("line", string(line)))
			}
			o.partial = o.partial[i+1:]
		}
	}

	return len(p), nil
}

// Tail returns the most recent output.
func (o *output) Tail() string {
	o.mu.Lock()
	defer o.mu.Unlock()

	return string(o.tail)
}
