package testenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// shell starts sh -c script as a process named "sh".
func shell(t *testing.T, script string, out *syncBuffer) *Process {
	t.Helper()
	c := Command{Name: "sh", Path: "/bin/sh", Args: []string{"-c", script}, StopTimeout: time.Second}
	if out != nil {
		c.Output = out
	}
	p, err := StartProcess(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	return p
}

func TestProcessOutputIsPrefixedByLine(t *testing.T) {
	var out syncBuffer
	p := shell(t, "echo one; echo two >&2", &out)
	<-p.Done()
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "sh        | one\n") || !strings.Contains(got, "sh        | two\n") {
		t.Fatalf("output %q, want both lines with the name in front", got)
	}
	if got := p.Output(); got != "one\ntwo\n" && got != "two\none\n" {
		t.Fatalf("Output() = %q", got)
	}
}

func TestStopIsCleanOnSIGTERM(t *testing.T) {
	p := shell(t, "echo started; exec sleep 60", nil)
	Eventually(t, 5*time.Second, func() error {
		if p.Output() == "" {
			return errors.New("no output yet")
		}
		return nil
	}, "the shell runs")
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestStopKillsAProcessThatIgnoresSIGTERM(t *testing.T) {
	p := shell(t, `trap "" TERM; echo started; while :; do sleep 0.1; done`, nil)
	Eventually(t, 5*time.Second, func() error {
		if p.Output() == "" {
			return errors.New("no output yet")
		}
		return nil
	}, "the shell runs")
	err := p.Stop()
	if err == nil || !strings.Contains(err.Error(), "was killed") || !strings.Contains(err.Error(), "started") {
		t.Fatalf("Stop = %v, want an error saying it was killed, with the output", err)
	}
}

func TestStopReportsAFailedExit(t *testing.T) {
	p := shell(t, `trap "echo failing; exit 3" TERM; echo started; while :; do sleep 0.1; done`, nil)
	Eventually(t, 5*time.Second, func() error {
		if p.Output() == "" {
			return errors.New("no output yet")
		}
		return nil
	}, "the shell runs")
	if err := p.Stop(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Stop = %v, want exit status 3", err)
	}
}

func TestWaitReadyGivesUpWhenTheProcessExits(t *testing.T) {
	p := shell(t, "exit 2", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := WaitReady(ctx, func(context.Context) error { return errors.New("not yet") }, p)
	if err == nil || errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "not yet") {
		t.Fatalf("WaitReady = %v, want the exit, not the deadline, and the last check's error", err)
	}
}

func TestWaitReadyReturnsOnceTheCheckPasses(t *testing.T) {
	calls := 0
	err := WaitReady(context.Background(), func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("WaitReady = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestEventually(t *testing.T) {
	calls := 0
	Eventually(t, 5*time.Second, func() error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	}, "three calls")

	var f fakeTB
	Eventually(&f, 100*time.Millisecond, func() error { return errors.New("still 503") }, "the %s is up", "store")
	if want := "the store is up: not within 100ms: still 503"; f.failure != want {
		t.Fatalf("failure %q, want %q", f.failure, want)
	}
}

type fakeTB struct{ failure string }

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failure = fmt.Sprintf(format, args...)
}

// syncBuffer is a strings.Builder safe for the copying goroutine and the
// test to use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
