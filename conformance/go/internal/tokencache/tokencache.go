// Package tokencache reaches two unexported functions of k8s.io/apiserver's token cache that
// the conformance vectors need and the package does not export:
//
//   - newWithClock: New with an injected clock (k8s' own tests use it with a fake clock), so
//     TTL vectors run on k8s.io/utils/clock/testing.FakeClock instead of sleeping;
//   - keyFunc: the cache key, so the key layout is checked with k8s' TestKeyFunc vectors.
//
// Both are bound with go:linkname to the exact symbols of k8s.io/apiserver v0.37.2 (pinned in
// go.mod). This is test-oracle-only plumbing: the code that runs is k8s.io/apiserver's.
package tokencache

import (
	"sync"
	"time"
	_ "unsafe" // go:linkname

	"k8s.io/apiserver/pkg/authentication/authenticator"
	_ "k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/utils/clock"
)

//go:linkname NewWithClock k8s.io/apiserver/pkg/authentication/token/cache.newWithClock
func NewWithClock(a authenticator.Token, cacheErrs bool, successTTL, failureTTL time.Duration, c clock.Clock) authenticator.Token

//go:linkname KeyFunc k8s.io/apiserver/pkg/authentication/token/cache.keyFunc
func KeyFunc(hashPool *sync.Pool, auds []string, token string) string
