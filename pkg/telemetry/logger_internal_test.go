package telemetry

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuilder is a strings.Builder safe for the flusher goroutine.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestBufferedWriterFlushesPeriodicallyAndOnClose(t *testing.T) {
	var out lockedBuilder
	w := newBufferedWriter(&out, 20*time.Millisecond)
	w.Write([]byte("first\n"))
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "first\n" {
		if time.Now().After(deadline) {
			t.Fatalf("not flushed by the ticker: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.Write([]byte("second\n"))
	w.Close()
	if got := out.String(); got != "first\nsecond\n" {
		t.Fatalf("after Close: %q", got)
	}
	w.Close() // twice is fine
}
