package telemetry

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// signallingBuilder is a strings.Builder safe for the flusher goroutine that
// announces each write.
type signallingBuilder struct {
	mu      sync.Mutex
	b       strings.Builder
	written chan struct{}
}

func (l *signallingBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	select {
	case l.written <- struct{}{}:
	default:
	}
	return n, err
}

func (l *signallingBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestBufferedWriterFlushesPeriodicallyAndOnClose(t *testing.T) {
	out := &signallingBuilder{written: make(chan struct{}, 1)}
	w := newBufferedWriter(out, 20*time.Millisecond)
	w.Write([]byte("first\n"))
	select {
	case <-out.written:
	case <-time.After(10 * time.Second):
		t.Fatal("not flushed by the ticker")
	}
	if got := out.String(); got != "first\n" {
		t.Fatalf("after the ticker: %q", got)
	}
	w.Write([]byte("second\n"))
	w.Close()
	if got := out.String(); got != "first\nsecond\n" {
		t.Fatalf("after Close: %q", got)
	}
	w.Close() // twice is fine
}

// blockingWriter holds every write until released, as a pipe whose reader
// stalls does.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	n       int
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += len(p)
	return len(p), nil
}

// A log line never waits on a stalled writer until the buffer holds holdAt
// bytes; past that, writers wait, and nothing is lost.
func TestBufferedWriterDoesNotBlockOnAStalledWriter(t *testing.T) {
	out := &blockingWriter{release: make(chan struct{})}
	w := newBufferedWriter(out, time.Millisecond)
	line := []byte(strings.Repeat("x", 255) + "\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range flushSoon * 4 / len(line) { // the flusher is stuck on its first write meanwhile
			w.Write(line)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writers waited on a stalled writer below the hold mark")
	}
	total := len(line) * (flushSoon * 4 / len(line))
	close(out.release)
	w.Close()
	if out.n != total {
		t.Fatalf("%d bytes written, want %d", out.n, total)
	}
}

// A line written after Close goes straight out: there is no flusher left
// to write it, and a writer never waits on one.
func TestBufferedWriterWritesThroughAfterClose(t *testing.T) {
	out := &signallingBuilder{written: make(chan struct{}, 1)}
	w := newBufferedWriter(out, time.Hour)
	w.Close()
	big := []byte(strings.Repeat("x", holdAt) + "\n")
	for range 2 {
		if _, err := w.Write(big); err != nil {
			t.Fatal(err)
		}
	}
	if got := out.String(); len(got) != 2*len(big) {
		t.Fatalf("wrote %d bytes, want %d", len(got), 2*len(big))
	}
}
