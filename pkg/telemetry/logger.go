package telemetry

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// NewLogger returns the process's logger: JSON lines on stderr, at the level
// named by LOG_LEVEL (debug, info, warn or error; default info), each line
// carrying the service's name.
func NewLogger(service string) (*slog.Logger, error) {
	level := slog.LevelInfo
	if v, ok := os.LookupEnv("LOG_LEVEL"); ok && v != "" {
		if err := level.UnmarshalText([]byte(strings.ToLower(v))); err != nil {
			return nil, fmt.Errorf("LOG_LEVEL: must be debug, info, warn or error, got %q", v)
		}
	}
	h := slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	return slog.New(h).With("service", service), nil
}
