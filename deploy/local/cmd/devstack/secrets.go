package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/liveproctor/workspaces/pkg/ident"
)

// envFile is a set of NAME=value lines kept in a file under .data/.
type envFile map[string]string

func (e envFile) environ() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

func readEnvFile(path string) (envFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars := envFile{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: line %q is not NAME=value", path, line)
		}
		vars[name] = value
	}
	return vars, s.Err()
}

func writeEnvFile(path, comment string, vars envFile) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", comment)
	for _, kv := range vars.environ() {
		b.WriteString(kv + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// loadOrCreate reads path, or creates it with create() the first time.
// Variables set in the environment win over the file.
func loadOrCreate(path string, create func() (envFile, string, error)) (envFile, error) {
	vars, err := readEnvFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		var comment string
		if vars, comment, err = create(); err != nil {
			return nil, err
		}
		err = writeEnvFile(path, comment, vars)
	}
	if err != nil {
		return nil, err
	}
	for name := range vars {
		if v := os.Getenv(name); v != "" {
			vars[name] = v
		}
	}
	return vars, nil
}

// localSecrets are the workspace service's key-encryption and HMAC keys for
// this machine. Losing them makes stored secrets unreadable, like losing
// the Kubernetes Secret would in production.
func localSecrets() (envFile, string, error) {
	vars := envFile{}
	for _, name := range []string{"KEY_ENCRYPTION_KEY", "KEY_HMAC_KEY"} {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, "", err
		}
		vars[name] = base64.StdEncoding.EncodeToString(key)
	}
	return vars, "Keys of the local workspace service, generated on the first `make run`. Keep them with .data/.", nil
}

// bootstrap describes the root workspace's key pair for this run.
type bootstrap struct {
	vars      envFile
	path      string // the file holding it, "" when it came from the environment
	generated bool   // made by this run
}

func (b bootstrap) displayPath() string {
	if b.path == "" {
		return "<your environment>"
	}
	return b.path
}

// bootstrapPair returns the root key pair: BOOTSTRAP_APP_KEY/SECRET from the
// environment when set, else the saved pair, else a new one saved to path.
func bootstrapPair(path string) (bootstrap, error) {
	if k, s := os.Getenv("BOOTSTRAP_APP_KEY"), os.Getenv("BOOTSTRAP_APP_SECRET"); k != "" || s != "" {
		if k == "" || s == "" {
			return bootstrap{}, errors.New("set both BOOTSTRAP_APP_KEY and BOOTSTRAP_APP_SECRET, or neither")
		}
		return bootstrap{vars: envFile{"BOOTSTRAP_APP_KEY": k, "BOOTSTRAP_APP_SECRET": s}}, nil
	}
	if vars, err := readEnvFile(path); err == nil {
		return bootstrap{vars: vars, path: path}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return bootstrap{}, err
	}
	vars := envFile{"BOOTSTRAP_APP_KEY": ident.NewUUID(), "BOOTSTRAP_APP_SECRET": ident.NewUUID()}
	if err := writeEnvFile(path, "The root workspace's key pair for local runs (HTTP Basic appKey:appSecret).", vars); err != nil {
		return bootstrap{}, err
	}
	return bootstrap{vars: vars, path: path, generated: true}, nil
}

// redactURI hides a password in a connection string before printing it.
func redactURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.User == nil {
		return uri
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
