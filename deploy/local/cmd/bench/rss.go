package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// memory is one reading of a process's resident set, in bytes.
type memory struct {
	Peak    int64 // VmHWM: the high-water mark since start or the last reset
	Current int64 // VmRSS
}

// readMemory reads VmHWM and VmRSS from /proc/<pid>/status.
func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch name {
		case "VmHWM":
			m.Peak, err = parseKB(value)
		case "VmRSS":
			m.Current, err = parseKB(value)
		}
		if err != nil {
			return memory{}, fmt.Errorf("pid %d: %s: %w", pid, name, err)
		}
	}
	if err := sc.Err(); err != nil {
		return memory{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	return m, nil
}

// parseKB reads a /proc size such as "  12345 kB" into bytes.
func parseKB(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "kB")), 10, 64)
	if err != nil {
		return 0, err
	}
	return n * 1024, nil
}

// resetPeak restarts the VmHWM count of a process at its current RSS, so a
// later reading is the peak of what happened in between (Linux ≥ 4.0;
// requires owning the process, which the benchmark does).
func resetPeak(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the peak RSS of pid %d: %w", pid, err)
	}
	return nil
}

// mib formats bytes as MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
