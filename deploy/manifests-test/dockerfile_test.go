package manifests

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction with its continuation lines
// joined.
type instruction struct {
	cmd  string // upper case: FROM, COPY, RUN, …
	args string
}

func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if more, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		full := strings.TrimSpace(cur.String())
		cur.Reset()
		if full == "" {
			continue
		}
		cmd, args, _ := strings.Cut(full, " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// workModules are the directories go.work uses.
func workModules(t *testing.T, root string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	inUse := false
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "use ("):
			inUse = true
		case inUse && line == ")":
			inUse = false
		case inUse && line != "":
			mods = append(mods, filepath.Clean(line))
		case strings.HasPrefix(line, "use "):
			mods = append(mods, filepath.Clean(strings.TrimSpace(strings.TrimPrefix(line, "use "))))
		}
	}
	if len(mods) == 0 {
		t.Fatal("go.work uses no module")
	}
	return mods
}

// dockerignored: the top-level entries of .dockerignore (enough for the
// simple patterns it holds).
func dockerignored(t *testing.T, root string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatalf(".dockerignore at the context root: %v", err)
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

func ignoredBy(patterns []string, path string) bool {
	for _, p := range patterns {
		if ok, _ := filepath.Match(p, path); ok {
			return true
		}
		if strings.HasPrefix(path, strings.TrimSuffix(p, "*")) && !strings.Contains(p, "**") && strings.HasSuffix(p, "*") {
			return true
		}
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

func TestDockerfiles(t *testing.T) {
	root := repoRoot(t)
	modules := workModules(t, root)
	ignored := dockerignored(t, root)
	for _, pattern := range []string{".git", "bin", ".data"} {
		if !slices.Contains(ignored, pattern) {
			t.Errorf(".dockerignore does not exclude %s", pattern)
		}
	}
	pkgs := map[string]string{
		"gateway":   "./gateway/cmd/gateway",
		"workspace": "./services/workspace/cmd/workspace",
		"auth":      "./services/auth/cmd/auth",
	}
	for _, comp := range components {
		t.Run(comp.name, func(t *testing.T) {
			ins := parseDockerfile(t, filepath.Join(root, "deploy", "docker", comp.name+".Dockerfile"))

			var froms []int
			for i, in := range ins {
				if in.cmd == "FROM" {
					froms = append(froms, i)
				}
			}
			if len(froms) < 2 {
				t.Fatalf("want a multi-stage build, got %d FROM", len(froms))
			}
			first := strings.Fields(ins[froms[0]].args)
			if len(first) != 3 || !strings.EqualFold(first[1], "AS") || first[2] != "build" || !strings.HasPrefix(first[0], "golang:1.26") {
				t.Errorf("first stage %q, want FROM golang:1.26… AS build", ins[froms[0]].args)
			}
			last := froms[len(froms)-1]
			final := strings.Fields(ins[last].args)[0]
			if !strings.HasPrefix(final, "gcr.io/distroless/static") && final != "scratch" {
				t.Errorf("final stage FROM %s, want distroless static or scratch", final)
			}
			build, finalStage := ins[froms[0]:last], ins[last:]

			// Every go.work module's go.mod/go.sum is copied before the
			// download, or go.work does not resolve; each file must exist and
			// not be ignored.
			download := slices.IndexFunc(build, func(in instruction) bool {
				return in.cmd == "RUN" && strings.Contains(in.args, "go mod download")
			})
			if download < 0 {
				t.Fatal("no RUN go mod download in the build stage")
			}
			copied := map[string]bool{}
			for _, in := range build[:download] {
				if in.cmd != "COPY" {
					continue
				}
				f := strings.Fields(in.args)
				for _, src := range f[:len(f)-1] {
					if strings.HasPrefix(src, "--") {
						continue
					}
					copied[filepath.Clean(src)] = true
					if _, err := os.Stat(filepath.Join(root, src)); err != nil {
						t.Errorf("COPY %s: %v", src, err)
					}
					if ignoredBy(ignored, filepath.Clean(src)) {
						t.Errorf("COPY %s: excluded by .dockerignore", src)
					}
				}
			}
			need := []string{"go.work", "go.work.sum"}
			for _, m := range modules {
				need = append(need, filepath.Join(m, "go.mod"))
				// A module that requires nothing has no go.sum.
				if _, err := os.Stat(filepath.Join(root, m, "go.sum")); err == nil {
					need = append(need, filepath.Join(m, "go.sum"))
				}
			}
			for _, n := range need {
				if !copied[n] {
					t.Errorf("%s is not copied before go mod download", n)
				}
			}

			// The build: static, trimmed, of the right package.
			goBuild := regexp.MustCompile(`go build .*` + regexp.QuoteMeta(pkgs[comp.name]) + `(\s|$)`)
			built := false
			for _, in := range build[download:] {
				if in.cmd == "RUN" && goBuild.MatchString(in.args) {
					built = true
					for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags="-s -w"`} {
						if !strings.Contains(in.args, want) {
							t.Errorf("go build lacks %s: %s", want, in.args)
						}
					}
				}
			}
			if !built {
				t.Errorf("no RUN go build … %s after the download", pkgs[comp.name])
			}
			// Sources are copied after the download (layer caching) and are
			// what the package needs: pkg and its own module.
			moduleDir := strings.TrimPrefix(pkgs[comp.name][:strings.Index(pkgs[comp.name], "/cmd/")], "./")
			for _, dir := range []string{"pkg", moduleDir} {
				if !slices.ContainsFunc(build[download:], func(in instruction) bool {
					f := strings.Fields(in.args)
					return in.cmd == "COPY" && len(f) >= 2 && filepath.Clean(f[0]) == dir
				}) {
					t.Errorf("the sources of %s are not copied after the download", dir)
				}
			}

			// The final stage runs as a non-root user and exposes the port.
			user := ""
			var expose []string
			entry := ""
			for _, in := range finalStage {
				switch in.cmd {
				case "USER":
					user = in.args
				case "EXPOSE":
					expose = append(expose, strings.Fields(in.args)...)
				case "ENTRYPOINT":
					entry = in.args
				}
			}
			name, _, _ := strings.Cut(user, ":")
			if uid, err := strconv.Atoi(name); (err == nil && uid == 0) || (err != nil && name != "nonroot") {
				t.Errorf("final stage USER %q, want nonroot or a non-zero uid", user)
			}
			if !slices.Contains(expose, strconv.Itoa(int(comp.port))) && !slices.Contains(expose, strconv.Itoa(int(comp.port))+"/tcp") {
				t.Errorf("final stage EXPOSE %v, want %d", expose, comp.port)
			}
			if entry != `["/`+comp.name+`"]` {
				t.Errorf("ENTRYPOINT %s, want [\"/%s\"]", entry, comp.name)
			}
		})
	}
}
