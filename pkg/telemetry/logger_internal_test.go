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
