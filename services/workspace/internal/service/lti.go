package service

import (
	"time"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongostore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/launchstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformags"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformkeys"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformnrps"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformreg"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformtoken"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/scorestore"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	ltigrpcport "github.com/liveproctor/workspaces/services/workspace/internal/lti/ports/grpcport"
)

// launchNoncesInMemory bounds the LTI launch nonces a replica without Redis
// remembers: ten minutes' worth of launches at over 150 a second.
const launchNoncesInMemory = 100_000

// deepLinksInMemory bounds the LTI 1.3 deep-linking requests a replica
// without Redis keeps until their reply.
const deepLinksInMemory = 100_000

// platformTokensInMemory bounds the access tokens to platforms a replica
// without Redis keeps.
const platformTokensInMemory = 10_000

// registrationLinksInMemory bounds the registration links a replica
// without Redis keeps.
const registrationLinksInMemory = 10_000

// newLaunchStore is the LTI 1.3 launches' records, on the workspace
// store's database and through its breaker, kept for the session and
// LTI_LAUNCH_GRACE after it.
func (s *Service) newLaunchStore(storeBreaker *breaker.Breaker) *launchstore.Store {
	return launchstore.New(s.mongo.Database(s.cfg.MongoDatabase), ltiapp.LTI13LaunchSession+s.cfg.LTILaunchGrace,
		launchstore.WithBreaker(storeBreaker))
}

// newScoreStore is the scores sent to platforms' gradebooks, on the
// workspace store's database and through its breaker, kept
// LTI_SCORE_RETENTION.
func (s *Service) newScoreStore(storeBreaker *breaker.Breaker) *scorestore.Store {
	return scorestore.New(s.mongo.Database(s.cfg.MongoDatabase), s.cfg.LTIScores.Retention, scorestore.WithBreaker(storeBreaker))
}

// newLTI builds the LTI context's use cases over the workspace side
// (workspaces), with every store they need: in Redis when there is one,
// so that every replica refuses a replayed launch and finds the logins,
// deep links and registration links another one made, and all share one
// access token per platform and scope set (while Redis is
// unreachable they are refused, UNAVAILABLE); in this replica's memory
// otherwise. Failed launches count against limits; launches and refusals
// are recorded in the registrations' launch health (health, in MongoDB).
// It also builds the delivery of scores to the platforms' gradebooks,
// which runLoops runs.
func (s *Service) newLTI(workspaces ltiapp.Workspaces, repo *mongostore.Repository, launches ltiapp.LTI13LaunchStore, scores *scorestore.Store,
	health ltiapp.LaunchHealthStore, box *secretbox.Box, urls ltidomain.ToolURLs, limits *ratelimit.Guard) (ltigrpcport.UseCases, *ltiapp.ScoreDelivery) {
	settings := ltiapp.Settings{URLs: urls, Policy: s.cfg.LTIURLs, Logger: s.logger}
	var (
		nonces    ltiapp.NonceStore
		logins    ltiapp.LTI13LoginStore // at most LTI13PendingLoginsMax pending
		deepLinks ltiapp.LTI13DeepLinkStore
		links     ltiapp.RegistrationLinkStore
		tokens    ltiapp.PlatformTokenStore
	)
	if s.redis != nil {
		nonces, logins = ltistate.NewRedisNonces(s.redis), ltistate.NewRedisLogins(s.redis, s.cfg.LTI13PendingLoginsMax)
		deepLinks, links = ltistate.NewRedisDeepLinks(s.redis), ltistate.NewRedisRegistrationLinks(s.redis)
		tokens = ltistate.NewRedisPlatformTokens(s.redis)
	} else {
		nonces, logins = ltistate.NewMemoryNonces(launchNoncesInMemory, nil), ltistate.NewMemoryLogins(s.cfg.LTI13PendingLoginsMax, nil)
		deepLinks = ltistate.NewMemoryDeepLinks(deepLinksInMemory, nil)
		links = ltistate.NewMemoryRegistrationLinks(registrationLinksInMemory, nil)
		tokens = ltistate.NewMemoryPlatformTokens(platformTokensInMemory, nil)
	}
	// Platforms are called under the outbound rule (LTI_ALLOW_INSECURE_HOSTS):
	// their keys, which launches are checked with, Dynamic Registration, the
	// access tokens and the Advantage services they open. The tool's own
	// keys are kept in the workspace store.
	platformKeys := platformkeys.New(outbound.NewClient(s.cfg.LTIURLs, platformKeysTimeout), nil, s.cfg.LTIJWKSRefetch)
	registrar := platformreg.New(outbound.NewClient(s.cfg.LTIURLs, platformRegistrationTimeout))
	toolKeys := ltiapp.NewToolKeys(repo, box, s.cfg.LTIToolKeys, nil)
	platformTokens := ltiapp.NewPlatformTokens(platformtoken.New(outbound.NewClient(s.cfg.LTIURLs, platformTokenTimeout), nil),
		tokens, toolKeys, 0, settings)
	memberships := platformnrps.New(outbound.NewClient(s.cfg.LTIURLs, platformServiceTimeout), nil)
	gradebook := platformags.New(outbound.NewClient(s.cfg.LTIURLs, platformServiceTimeout), nil)
	sc := s.cfg.LTIScores
	delivery := ltiapp.NewScoreDelivery(workspaces, scores, scores.LineItems(), platformTokens, gradebook, replicaName(),
		ltiapp.ScoreDeliverySettings{
			Workers: sc.Workers, Lease: sc.Lease, Poll: sc.Poll, Window: sc.GiveUpAfter, Retry: sc.RetrySchedule.Backoff,
			Logger: s.logger,
		})
	return ltigrpcport.UseCases{
		Registrations:       ltiapp.NewRegistrations(workspaces, health, settings),
		LTI11Launches:       ltiapp.NewLTI11Launches(workspaces, nonces, limits, settings),
		LTI13Logins:         ltiapp.NewLTI13Logins(workspaces, logins, health, settings),
		LTI13Launches:       ltiapp.NewLTI13Launches(workspaces, logins, platformKeys, deepLinks, launches, limits, health, settings),
		Launches:            ltiapp.NewLaunches(workspaces, launches),
		Roster:              ltiapp.NewRoster(workspaces, launches, platformTokens, memberships, box),
		Grades:              ltiapp.NewGrades(workspaces, launches, scores, time.Now),
		DeepLinking:         ltiapp.NewDeepLinking(workspaces, deepLinks, toolKeys, settings),
		DynamicRegistration: ltiapp.NewDynamicRegistration(workspaces, links, registrar, settings),
		ToolKeys:            toolKeys,
	}, delivery
}
