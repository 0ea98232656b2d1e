package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type composeFile struct {
	Services map[string]composeService `json:"services"`
}

type composeService struct {
	Image   string `json:"image"`
	Command any    `json:"command"` // a list or a string
	Build   *struct {
		Context    string `json:"context"`
		Dockerfile string `json:"dockerfile"`
	} `json:"build"`
	Ports       []any             `json:"ports"`
	Environment map[string]string `json:"environment"`
	EnvFile     any               `json:"env_file"`
	Healthcheck *struct {
		Test any `json:"test"`
	} `json:"healthcheck"`
	DependsOn map[string]struct {
		Condition string `json:"condition"`
	} `json:"depends_on"`
	ReadOnly bool `json:"read_only"`
}

func words(v any) []string {
	switch c := v.(type) {
	case string:
		return strings.Fields(c)
	case []any:
		var out []string
		for _, w := range c {
			s, _ := w.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}

// hasOption reports whether a command line sets name to value, as
// "--name value" or "--name=value".
func hasOption(cmd []string, name, value string) bool {
	for i, w := range cmd {
		if w == name+"="+value || (w == name && i+1 < len(cmd) && cmd[i+1] == value) {
			return true
		}
	}
	return false
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	return f
}

func TestCompose(t *testing.T) {
	f := loadCompose(t)
	for _, name := range []string{"mongodb", "redis", "workspace", "auth", "gateway"} {
		if _, ok := f.Services[name]; !ok {
			t.Fatalf("no service %q", name)
		}
	}

	mongo := f.Services["mongodb"]
	if cmd := words(mongo.Command); !slices.ContainsFunc(cmd, func(w string) bool { return strings.HasPrefix(w, "--replSet") }) {
		t.Errorf("mongodb command %v does not start a replica set (--replSet)", cmd)
	}
	if !strings.HasPrefix(mongo.Image, "mongo:7") {
		t.Errorf("mongodb image %q, want mongo:7", mongo.Image)
	}
	if mongo.Healthcheck == nil || !strings.Contains(strings.Join(words(mongo.Healthcheck.Test), " "), "rs.initiate") {
		t.Error("mongodb health check does not initiate the replica set")
	}

	redis := f.Services["redis"]
	cmd := words(redis.Command)
	for _, opt := range [][2]string{
		{"--appendonly", "yes"}, {"--appendfsync", "everysec"}, {"--maxmemory-policy", "noeviction"},
	} {
		if !hasOption(cmd, opt[0], opt[1]) {
			t.Errorf("redis command %v lacks %s %s", cmd, opt[0], opt[1])
		}
	}
	if !strings.HasPrefix(redis.Image, "redis:7") {
		t.Errorf("redis image %q, want redis:7", redis.Image)
	}

	// Only the gateway is published, and only on the loopback interface.
	for name, s := range f.Services {
		if name != "gateway" && len(s.Ports) > 0 {
			t.Errorf("%s publishes %v; only the gateway may", name, s.Ports)
		}
	}
	gw := f.Services["gateway"]
	if len(gw.Ports) == 0 {
		t.Error("the gateway publishes no port")
	}
	for _, p := range gw.Ports {
		s, ok := p.(string)
		if !ok || !strings.HasPrefix(s, "127.0.0.1:") || !strings.HasSuffix(s, ":8080") {
			t.Errorf("gateway port %v, want \"127.0.0.1:…:8080\"", p)
		}
	}

	// The components are built from their Dockerfiles, from the root.
	for _, comp := range components {
		s := f.Services[comp.name]
		if s.Build == nil || s.Build.Dockerfile != "deploy/docker/"+comp.name+".Dockerfile" ||
			filepath.Clean(filepath.Join("deploy", s.Build.Context)) != "." {
			t.Errorf("%s: build %+v, want context .. and dockerfile deploy/docker/%s.Dockerfile", comp.name, s.Build, comp.name)
		}
		// The peer addresses name compose services and their ports.
		for k, v := range s.Environment {
			if target, ok := strings.CutSuffix(k, "_SERVICE_ADDR"); ok {
				want := strings.ToLower(target)
				var port int32
				for _, c := range components {
					if c.name == want {
						port = c.port
					}
				}
				if v != want+":"+itoa(port) {
					t.Errorf("%s: %s = %q, want %s:%d", comp.name, k, v, want, port)
				}
			}
		}
		// Secrets come from the env file, never from compose.yaml itself
		// (its MONGODB_URI carries no credentials: that MongoDB has no auth).
		for _, k := range secretOnly {
			if v, ok := s.Environment[k]; ok && k != "MONGODB_URI" {
				t.Errorf("%s: %s is written into compose.yaml (%q)", comp.name, k, v)
			}
		}
	}
	// The env file with the secrets lives under .data/, which git and the
	// docker build context both ignore; the gateway needs none.
	for _, name := range []string{"workspace", "auth"} {
		if files := words(f.Services[name].EnvFile); len(files) != 1 || files[0] != "../.data/compose.env" {
			t.Errorf("%s: env_file %v, want ../.data/compose.env", name, files)
		}
	}
	if f.Services["gateway"].EnvFile != nil {
		t.Error("gateway: has an env_file, but it needs no secrets")
	}
	if ws := f.Services["workspace"]; !strings.Contains(ws.Environment["MONGODB_URI"], "replicaSet=") {
		t.Errorf("workspace MONGODB_URI %q does not name the replica set", ws.Environment["MONGODB_URI"])
	}
	if d := f.Services["workspace"].DependsOn["mongodb"]; d.Condition != "service_healthy" {
		t.Errorf("workspace depends on mongodb with condition %q, want service_healthy", d.Condition)
	}
	if d := f.Services["auth"].DependsOn["redis"]; d.Condition != "service_healthy" {
		t.Errorf("auth depends on redis with condition %q, want service_healthy", d.Condition)
	}
}

// TestComposeEnvExample: the example env file names every secret the stack
// needs and holds only placeholders.
func TestComposeEnvExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "compose.env.example"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("malformed line %q", line)
			continue
		}
		vars[k] = v
	}
	for _, k := range []string{"KEY_ENCRYPTION_KEY", "KEY_HMAC_KEY", "BOOTSTRAP_APP_KEY", "BOOTSTRAP_APP_SECRET"} {
		v, ok := vars[k]
		if !ok {
			t.Errorf("%s is missing", k)
		} else if !strings.HasPrefix(v, "REPLACE") {
			t.Errorf("%s = %q: want a REPLACE… placeholder, never a value", k, v)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
