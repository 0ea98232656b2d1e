package telemetry

import (
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
// Lines are buffered and written at least every 100 ms, by a goroutine of
// their own: a request that logs only appends its line in memory, and never
// waits on stderr (a pipe that a busy reader drains slowly). Call the
// returned flush before the process exits (a crash that skips it loses at
// most the last 100 ms of lines).
func NewLogger(service string, level slog.Level) (*slog.Logger, func()) {
	out := newBufferedWriter(os.Stderr, logFlushInterval)
	h := slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level})
	return slog.New(h).With("service", service), out.Close
}

// The buffer's marks: past flushSoon bytes the flusher is woken before its
// tick; past holdAt bytes (stderr not keeping up at all) writers wait for
// it, so lines are slowed down, never dropped.
const (
	flushSoon = 64 << 10
	holdAt    = 4 << 20
)

// bufferedWriter collects whole lines in memory; its flusher writes them
// out, outside the lock, so writers never wait on the underlying writer.
type bufferedWriter struct {
	w       io.Writer
	mu      sync.Mutex
	drained *sync.Cond // signalled when the flusher has taken the buffer
	buf     []byte
	spare   []byte // the buffer the flusher last wrote, reused
	closed  bool   // the flusher has stopped: Write writes through
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newBufferedWriter(w io.Writer, every time.Duration) *bufferedWriter {
	b := &bufferedWriter{w: w, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	b.drained = sync.NewCond(&b.mu)
	go b.run(every)
	return b
}

// run flushes every tick, when woken, and once more when stopped.
func (b *bufferedWriter) run(every time.Duration) {
	defer close(b.done)
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-b.stop:
			b.mu.Lock()
			b.closed = true
			b.mu.Unlock()
			b.flush()
			return
		case <-ticker.C:
		case <-b.wake:
		}
		b.flush()
	}
}

// Write buffers p (slog writes one whole line per call).
func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf) >= holdAt && !b.closed {
		b.signal()
		b.drained.Wait()
	}
	if b.closed { // a line after Close (a shutdown still logging)
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= flushSoon {
		b.signal()
	}
	return len(p), nil
}

// signal wakes the flusher, if it is not already woken.
func (b *bufferedWriter) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// flush takes the buffer and writes it out without holding the lock.
func (b *bufferedWriter) flush() {
	b.mu.Lock()
	out := b.buf
	if len(out) == 0 {
		b.mu.Unlock()
		return
	}
	b.buf, b.spare = b.spare[:0], nil
	b.drained.Broadcast()
	b.mu.Unlock()
	_, _ = b.w.Write(out)
	if cap(out) <= holdAt {
		b.mu.Lock()
		b.spare = out[:0]
		b.mu.Unlock()
	}
}

// Close writes out what is buffered and stops the flusher.
func (b *bufferedWriter) Close() {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
	})
}
