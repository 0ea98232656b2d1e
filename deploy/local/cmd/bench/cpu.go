package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which is 100 on every Linux architecture Go supports.
const clockTicks = 100

// cpuTime reads the user plus system CPU time a process has used so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields from the last ')'. utime and stime are fields 14 and 15.
	end := strings.LastIndexByte(string(b), ')')
	if end < 0 {
		return 0, fmt.Errorf("read CPU time of pid %d: malformed stat", pid)
	}
	fields := strings.Fields(string(b[end+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("read CPU time of pid %d: stat has %d fields after the name", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// cpuMeter measures the CPU time a set of processes uses over a span.
type cpuMeter struct {
	procs []namedPID
	start []time.Duration
}

// startCPU reads every process's CPU time now.
func startCPU(procs []namedPID) (*cpuMeter, error) {
	m := &cpuMeter{procs: procs, start: make([]time.Duration, len(procs))}
	for i, p := range procs {
		t, err := cpuTime(p.PID)
		if err != nil {
			return nil, err
		}
		m.start[i] = t
	}
	return m, nil
}

// processCPU is the CPU time one process used during a measurement.
type processCPU struct {
	Name string
	Used time.Duration
}

// stop returns what each process used since startCPU.
func (m *cpuMeter) stop() ([]processCPU, error) {
	out := make([]processCPU, len(m.procs))
	for i, p := range m.procs {
		t, err := cpuTime(p.PID)
		if err != nil {
			return nil, err
		}
		out[i] = processCPU{Name: p.Name, Used: t - m.start[i]}
	}
	return out, nil
}

// perCall divides the CPU time used by the calls made, in microseconds.
func perCall(used time.Duration, calls int) float64 {
	if calls == 0 {
		return 0
	}
	return float64(used) / float64(time.Microsecond) / float64(calls)
}
