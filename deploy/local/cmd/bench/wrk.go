package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// wrkThreads is wrk's -t: one thread per core of this machine's two.
const wrkThreads = 2

// wrkTimeout is wrk's --timeout: a request unanswered by then counts as a
// socket error. It matches the services' default request deadline.
const wrkTimeout = 5 * time.Second

// wrkLoad is one HTTP request shape wrk sends over and over: every body in
// turn when there are several (the login cycles through its users).
type wrkLoad struct {
	Method string
	URL    string
	Header http.Header
	Bodies [][]byte
}

// wrkRuns numbers the files of wrk's runs.
var wrkRuns atomic.Int64

// runWrk drives l with wrk at conns connections for d (whole seconds) and
// returns what wrk saw, and the CPU time wrk itself used.
//
// The Lua script writes wrk's summary and its whole latency histogram
// (microseconds, with counts) to a file when wrk is done, so rounds can be
// pooled exactly. Errors are wrk's: answers with a status ≥ 400 (these
// routes answer no 1xx or 3xx) plus connect, read, write and timeout
// errors.
func runWrk(ctx context.Context, tmp string, l wrkLoad, conns int, d time.Duration) (*loadgen.Result, time.Duration, error) {
	n := wrkRuns.Add(1)
	script := filepath.Join(tmp, fmt.Sprintf("wrk-%d.lua", n))
	out := filepath.Join(tmp, fmt.Sprintf("wrk-%d.out", n))
	u, err := url.Parse(l.URL)
	if err != nil {
		return nil, 0, err
	}
	if err := os.WriteFile(script, []byte(wrkScript(l, u.RequestURI(), out)), 0o600); err != nil {
		return nil, 0, fmt.Errorf("write the wrk script: %w", err)
	}
	cmd := exec.CommandContext(ctx, "wrk", "-t", strconv.Itoa(wrkThreads), "-c", strconv.Itoa(conns),
		"-d", strconv.Itoa(int(wrkDuration(d)/time.Second))+"s", "--timeout", strconv.Itoa(int(wrkTimeout/time.Second))+"s",
		"--latency", "-s", script, u.Scheme+"://"+u.Host)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		return nil, 0, fmt.Errorf("wrk: %w\n%s", err, stderr.String())
	}
	used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	res, err := readWrkOutput(out)
	if err != nil {
		return nil, 0, err
	}
	return res, used, nil
}

// wrkDuration is how long wrk runs when asked to run for d: whole
// seconds, at least one.
func wrkDuration(d time.Duration) time.Duration {
	return max(d.Round(time.Second), time.Second)
}

// wrkScript is the Lua script of one load: the requests are formatted once,
// in init, so each request costs wrk a table lookup.
func wrkScript(l wrkLoad, path, out string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrk.method = %s\nwrk.path = %s\n", luaString(l.Method), luaString(path))
	names := make([]string, 0, len(l.Header))
	for k := range l.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "wrk.headers[%s] = %s\n", luaString(k), luaString(l.Header.Get(k)))
	}
	if len(l.Bodies) > 0 {
		b.WriteString("local bodies = {\n")
		for _, body := range l.Bodies {
			fmt.Fprintf(&b, "  %s,\n", luaString(string(body)))
		}
		b.WriteString(`}
local reqs, i = {}, 0
init = function(args)
  for k, body in ipairs(bodies) do reqs[k] = wrk.format(nil, nil, nil, body) end
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
`)
	}
	fmt.Fprintf(&b, `done = function(summary, latency, requests)
  local f = assert(io.open(%s, "w"))
  local e = summary.errors
  f:write(string.format("requests %%d\nduration %%d\nstatus %%d\nconnect %%d\nread %%d\nwrite %%d\ntimeout %%d\n",
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout))
  for j = 1, #latency do
    local v, c = latency(j)
    f:write(string.format("latency %%d %%d\n", v, c))
  end
  f:close()
end
`, luaString(out))
	return b.String()
}

// luaString quotes s as a Lua string literal (decimal escapes for every
// byte that is not plain printable ASCII).
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "\\%03d", c)
	}
	b.WriteByte('"')
	return b.String()
}

// readWrkOutput reads what the script's done hook wrote.
func readWrkOutput(path string) (*loadgen.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read wrk's figures: %w", err)
	}
	defer f.Close()
	res := &loadgen.Result{}
	var socketErrors, statusErrors int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		nums := make([]int64, len(fields)-1)
		for i, s := range fields[1:] {
			if nums[i], err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, fmt.Errorf("wrk's figures: %q: %w", sc.Text(), err)
			}
		}
		switch {
		case fields[0] == "latency" && len(nums) == 2:
			for range nums[1] {
				res.Latencies = append(res.Latencies, time.Duration(nums[0])*time.Microsecond)
			}
		case len(nums) != 1:
			return nil, fmt.Errorf("wrk's figures: unexpected line %q", sc.Text())
		case fields[0] == "requests":
			res.Requests = int(nums[0])
		case fields[0] == "duration":
			res.Elapsed = time.Duration(nums[0]) * time.Microsecond
		case fields[0] == "status":
			statusErrors = int(nums[0])
		default: // connect, read, write, timeout
			socketErrors += int(nums[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read wrk's figures: %w", err)
	}
	res.Errors = statusErrors + socketErrors
	if res.Errors > 0 {
		res.FirstError = fmt.Errorf("wrk: %d answers with status ≥ 400, %d socket errors", statusErrors, socketErrors)
	}
	slices.Sort(res.Latencies)
	return res, nil
}
