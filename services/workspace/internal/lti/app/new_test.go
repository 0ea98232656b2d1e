package app_test

import (
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// A use case built without one of its dependencies is a wiring mistake,
// found when the service starts rather than at a call.
func TestUseCasesRefuseAMissingDependency(t *testing.T) {
	f := newFixture(t, deps{})
	for name, build := range map[string]func(){
		"registrations": func() { ltiapp.NewRegistrations(app.NewLTIPort(f.app), nil, ltiapp.Settings{}) },
		"1.1 launches":  func() { ltiapp.NewLTI11Launches(nil, ltistate.NewMemoryNonces(1, nil), noLimits{}, ltiapp.Settings{}) },
		"1.3 logins":    func() { ltiapp.NewLTI13Logins(nil, nil, &memoryHealth{}, ltiapp.Settings{}) },
		"deep linking":  func() { ltiapp.NewDeepLinking(nil, ltistate.NewMemoryDeepLinks(1, nil), f.toolKeys, ltiapp.Settings{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: built without a dependency", name)
				}
			}()
			build()
		}()
	}
}
