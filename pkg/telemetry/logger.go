package telemetry

import (
	"bufio"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// logFlushInterval bounds how long a log line waits in the buffer.
const logFlushInterval = 100 * time.Millisecond

// NewLogger returns the process's logger: JSON lines on stderr, at level,
// each line carrying the service's name.
//
// Lines are buffered and written at least every 100 ms, so a busy gateway
// does not pay a write system call per request; call the returned flush
// before the process exits (a crash that skips it loses at most the last
// 100 ms of lines).
func NewLogger(service string, level slog.Level) (*slog.Logger, func()) {
	out := newBufferedWriter(os.Stderr, logFlushInterval)
	h := slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level})
	return slog.New(h).With("service", service), out.Close
}

// bufferedWriter collects whole lines and writes them out periodically.
type bufferedWriter struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func newBufferedWriter(w io.Writer, every time.Duration) *bufferedWriter {
	b := &bufferedWriter{buf: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-ticker.C:
				b.flush()
			}
		}
	}()
	return b
}

// Write buffers p (slog writes one whole line per call).
func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *bufferedWriter) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.buf.Flush()
}

// Close writes out what is buffered and stops the flusher.
func (b *bufferedWriter) Close() {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
		b.flush()
	})
}
