package app

import "testing"

// The first page's URL is the platform's, as written, with the limit and
// the role added to its query, before any fragment, which is never sent.
func TestFirstMembersURL(t *testing.T) {
	for _, tc := range []struct {
		base, role string
		want       string
	}{
		{"https://lms.test/c/7/members", "", "https://lms.test/c/7/members?limit=50"},
		{"https://lms.test/c/7/members?Page=1", "Learner", "https://lms.test/c/7/members?Page=1&limit=50&role=Learner"},
		{"https://lms.test/c/7/members#top", "", "https://lms.test/c/7/members?limit=50"},
		{"https://lms.test/c/7/members?a=1#x?y", "", "https://lms.test/c/7/members?a=1&limit=50"},
	} {
		if got := firstMembersURL(tc.base, tc.role, 50); got != tc.want {
			t.Errorf("firstMembersURL(%q, %q) = %q, want %q", tc.base, tc.role, got, tc.want)
		}
	}
}
