package main

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// machine describes where the figures were taken.
type machine struct {
	CPU    string
	Cores  int
	Go     string
	Kernel string
	OS     string
}

func describeMachine() machine {
	m := machine{CPU: "unknown", Cores: runtime.NumCPU(), Go: runtime.Version(), Kernel: "unknown",
		OS: runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
				m.CPU = strings.TrimSpace(value)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}
