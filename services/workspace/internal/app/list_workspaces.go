package app

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// ListInput is a list request: a filter and a page.
type ListInput struct {
	Search    string
	States    []string
	PageSize  *int32 // nil: the largest page
	PageToken string
}

// ListResult is one page of workspaces; NextPageToken is empty on the last.
type ListResult struct {
	Workspaces    []*domain.Workspace
	NextPageToken string
}

// ListWorkspaces returns the caller's workspace and those it manages, active
// only, ordered by name (case-insensitive) then id, one page at a time.
func (a *App) ListWorkspaces(ctx context.Context, caller domain.Caller, in ListInput) (ListResult, error) {
	size, err := domain.CheckListQuery(in.Search, in.States, in.PageSize)
	if err != nil {
		return ListResult{}, err
	}
	q := domain.ListQuery{
		VisibleTo:    caller.WorkspaceID,
		NameContains: domain.NameKey(in.Search),
		States:       in.States,
		Limit:        size + 1, // one more tells whether a next page exists
	}
	filter := filterDigest(caller.WorkspaceID, q)
	if in.PageToken != "" {
		pos, err := decodePageToken(in.PageToken, filter)
		if err != nil {
			return ListResult{}, err
		}
		q.After = &pos
	}
	found, err := a.repo.List(ctx, q)
	if err != nil {
		return ListResult{}, fmt.Errorf("list workspaces: %w", err)
	}
	res := ListResult{Workspaces: found}
	if len(found) > size {
		res.Workspaces = found[:size]
		last := res.Workspaces[size-1]
		res.NextPageToken = encodePageToken(domain.ListPosition{NameKey: domain.NameKey(last.Name()), ID: last.ID()}, filter)
	}
	return res, nil
}

// pageToken is the position after the last item of a page, and the filter it
// belongs to: a token is only good for the list that issued it.
type pageToken struct {
	NameKey string `json:"k"`
	ID      string `json:"i"`
	Filter  string `json:"f"`
}

var errBadPageToken = fault.InvalidField("pageToken", "is not a token from this list: pass nextPageToken unchanged, with the same filter")

func encodePageToken(pos domain.ListPosition, filter string) string {
	b, _ := json.Marshal(pageToken{NameKey: pos.NameKey, ID: pos.ID, Filter: filter})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePageToken(s, filter string) (domain.ListPosition, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return domain.ListPosition{}, errBadPageToken
	}
	var t pageToken
	if err := json.Unmarshal(b, &t); err != nil || t.Filter != filter || t.ID == "" {
		return domain.ListPosition{}, errBadPageToken
	}
	return domain.ListPosition{NameKey: t.NameKey, ID: t.ID}, nil
}

// filterDigest identifies a caller's filter without carrying it in the token.
func filterDigest(caller string, q domain.ListQuery) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q|%q|%q", caller, q.NameContains, strings.Join(q.States, "\x00"))
	return hex.EncodeToString(h.Sum(nil)[:8])
}
