package mongostore

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// List entries: what a list selects and orders by, one small document per
// active workspace, so that a list reads small documents instead of whole
// workspaces. On the embedded store every list query reads every document
// of its collection, and the cost is per document and per byte: at 50,000
// a sorted filtered page over the workspaces took 41 s, over these entries
// 4.5 s (bench/store-scale.md). The page's workspaces are then read by _id.
//
// An entry is written after each workspace write (Create, Update) and again
// by each publish of the workspace's events, which reads the workspace as
// it is: a write whose entry failed is not acknowledged (its events are not
// published), and the publish or the relay brings the entry up to date. A
// list checks every workspace it returns against the query, so an entry
// that lags for a moment never shows a deleted or foreign workspace.
const (
	ListEntriesCollection = "list_entries"
	// StoreMetaCollection records one-time work on the store, such as
	// building the list entries of workspaces written before they existed.
	StoreMetaCollection = "store_meta"
)

// entriesBuilt is the store_meta document that says every workspace has
// its list entry.
const entriesBuilt = "list_entries_built"

// listEntryDoc is a workspace as lists see it: one string, so that the
// stand-in, whose cost is per value it parses, reads two values per
// workspace (a 5-field entry cost it 2 to 3 times as much; see
// bench/store-scale.md). The string is the fields of entryFields joined
// by NUL, in this order:
//
//	nameKey NUL id NUL state NUL revision NUL visibleTo[0] NUL visibleTo[1] …
//
// Names, ids and states hold no control characters (domain validation),
// so sorting by it is sorting by (nameKey, id), and a list's filter is one
// anchored regular expression over it (entryPattern).
type listEntryDoc struct {
	ID    string `bson:"_id"`
	Entry string `bson:"entry"`
}

// entryFields is an entry unpacked.
type entryFields struct {
	NameKey, ID, State string
	Revision           int64
	// VisibleTo is the workspace itself and its managers.
	VisibleTo []string
}

const entrySep = "\x00"

func packEntry(d *workspaceDoc) string {
	parts := append([]string{d.NameKey, d.ID, d.Address.State, strconv.FormatInt(d.Revision, 10), d.ID}, d.Managers...)
	return strings.Join(parts, entrySep)
}

func unpackEntry(s string) entryFields {
	parts := strings.Split(s, entrySep)
	for len(parts) < 5 {
		parts = append(parts, "")
	}
	rev, _ := strconv.ParseInt(parts[3], 10, 64)
	return entryFields{NameKey: parts[0], ID: parts[1], State: parts[2], Revision: rev, VisibleTo: parts[4:]}
}

// entryPattern is the regular expression (RE2, as the stand-in and
// MongoDB take it) selecting the entries q selects, but for the position.
func entryPattern(q domain.ListQuery) string {
	const field = `[^\x00]*`
	states := field
	if len(q.States) > 0 {
		quoted := make([]string, len(q.States))
		for i, st := range q.States {
			quoted[i] = regexp.QuoteMeta(st)
		}
		states = "(?:" + strings.Join(quoted, "|") + ")"
	}
	// nameKey containing the search, id, state, revision, then the
	// caller among the rest.
	return "^" + field + regexp.QuoteMeta(q.NameContains) + field + `\x00` + field + `\x00` + states + `\x00` + field +
		`\x00(?:.*\x00)?` + regexp.QuoteMeta(q.VisibleTo) + `(?:\x00|$)`
}

// entryAfter is the smallest entry string past position pos.
func entryAfter(pos domain.ListPosition) string {
	return pos.NameKey + entrySep + pos.ID + "\x01"
}

// syncEntry makes d's list entry match d: removed while d is deleted.
func (r *Repository) syncEntry(ctx context.Context, d *workspaceDoc) error {
	err := r.do(ctx, func(ctx context.Context) error {
		if d.DeletedAt != nil {
			_, err := r.entries.DeleteOne(ctx, bson.D{{Key: "_id", Value: d.ID}})
			return err
		}
		_, err := r.entries.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "entry", Value: packEntry(d)}}}}, options.UpdateOne().SetUpsert(true))
		if mongo.IsDuplicateKeyError(err) {
			return nil // a concurrent upsert inserted it; the publish syncs again
		}
		return err
	})
	if err != nil {
		return storeError("write list entry", err)
	}
	return nil
}

// resyncEntry brings workspace id's entry up to date, reading it until its
// revision holds still across the write, so that a sync from an older read
// that landed last is corrected.
func (r *Repository) resyncEntry(ctx context.Context, id string) error {
	const attempts = 5
	var prev int64 = -1
	for range attempts {
		var doc workspaceDoc
		err := r.do(ctx, func(ctx context.Context) error {
			return r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
				options.FindOne().SetProjection(bson.D{{Key: "outbox", Value: 0}})).Decode(&doc)
		})
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err != nil {
			return storeError("read workspace", err)
		}
		if doc.Revision == prev {
			return nil
		}
		// Most often the write before the publish wrote the entry already.
		var entry listEntryDoc
		err = r.do(ctx, func(ctx context.Context) error {
			return r.entries.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&entry)
		})
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			if doc.DeletedAt != nil {
				return nil
			}
		case err != nil:
			return storeError("read list entry", err)
		case doc.DeletedAt == nil && unpackEntry(entry.Entry).Revision == doc.Revision:
			return nil
		}
		if err := r.syncEntry(ctx, &doc); err != nil {
			return err
		}
		prev = doc.Revision
	}
	return nil
}

// buildEntries writes the list entries of every workspace once per store
// (recorded in store_meta), for workspaces written before entries existed.
// Lists read the workspaces themselves until then.
func (r *Repository) buildEntries(ctx context.Context) error {
	err := r.do(ctx, func(ctx context.Context) error {
		return r.meta.FindOne(ctx, bson.D{{Key: "_id", Value: entriesBuilt}}).Err()
	})
	if err == nil {
		r.entriesReady.Store(true)
		return nil
	}
	if !errors.Is(err, mongo.ErrNoDocuments) {
		return storeError("read store_meta", err)
	}
	var docs []workspaceDoc
	err = r.do(ctx, func(ctx context.Context) error {
		cur, err := r.workspaces.Find(ctx, bson.D{{Key: "deletedAt", Value: nil}},
			options.Find().SetProjection(bson.D{{Key: "outbox", Value: 0}, {Key: "keys", Value: 0}}))
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return storeError("read workspaces for list entries", err)
	}
	for i := range docs {
		if err := r.syncEntry(ctx, &docs[i]); err != nil {
			return err
		}
	}
	err = r.do(ctx, func(ctx context.Context) error {
		_, err := r.meta.InsertOne(ctx, bson.D{{Key: "_id", Value: entriesBuilt}})
		return err
	})
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return storeError("write store_meta", err)
	}
	r.entriesReady.Store(true)
	return nil
}

// listByEntries selects and orders by the list entries, then reads the
// page's workspaces by _id and keeps those that still match q. When an
// entry lagged behind its workspace (the workspace no longer matches), it
// reads on past the page, so a full page still means more may follow.
func (r *Repository) listByEntries(ctx context.Context, q domain.ListQuery) ([]*domain.Workspace, error) {
	limit := max(q.Limit, 1)
	var out []*domain.Workspace
	for range listRefills {
		want := limit - len(out)
		entries, err := r.readEntries(ctx, q, want)
		if err != nil {
			return nil, err
		}
		docs, err := r.readListed(ctx, entries)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if d != nil && matches(d, q) {
				out = append(out, d.toWorkspace())
			}
		}
		if len(out) == limit || len(entries) < want {
			return out, nil // a full page, or the last one
		}
		last := unpackEntry(entries[len(entries)-1].Entry)
		q.After = &domain.ListPosition{NameKey: last.NameKey, ID: last.ID}
	}
	return out, nil
}

// listRefills bounds the reads of one list past lagging entries.
const listRefills = 3

// readEntries reads up to n entries matching q, in list order.
func (r *Repository) readEntries(ctx context.Context, q domain.ListQuery, n int) ([]listEntryDoc, error) {
	pattern := entryPattern(q)
	if strings.ContainsRune(pattern, 0) {
		return nil, nil // a NUL in the query: no entry holds one, and a pattern cannot
	}
	filter := bson.A{bson.D{{Key: "entry", Value: bson.D{{Key: "$regex", Value: pattern}}}}}
	if q.After != nil {
		filter = append(filter, bson.D{{Key: "entry", Value: bson.D{{Key: "$gt", Value: entryAfter(*q.After)}}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "entry", Value: 1}}).SetLimit(int64(max(n, 1)))
	var entries []listEntryDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.entries.Find(ctx, bson.D{{Key: "$and", Value: filter}}, opts)
		if err != nil {
			return err
		}
		return cur.All(ctx, &entries)
	})
	if err != nil {
		return nil, storeError("list workspaces", err)
	}
	return entries, nil
}

// readListed reads the workspaces of entries by _id, a few at a time; a
// workspace that is gone is nil.
func (r *Repository) readListed(ctx context.Context, entries []listEntryDoc) ([]*workspaceDoc, error) {
	const readers = 8
	docs := make([]*workspaceDoc, len(entries))
	errs := make([]error, len(entries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, readers)
	for i, e := range entries {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var doc workspaceDoc
			err := r.do(ctx, func(ctx context.Context) error {
				return r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: e.ID}}).Decode(&doc)
			})
			switch {
			case errors.Is(err, mongo.ErrNoDocuments):
			case err != nil:
				errs[i] = storeError("read listed workspace", err)
			default:
				docs[i] = &doc
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return docs, nil
}

// matches reports whether workspace d belongs in the list q selects.
func matches(d *workspaceDoc, q domain.ListQuery) bool {
	if d.DeletedAt != nil || (d.ID != q.VisibleTo && !slices.Contains(d.Managers, q.VisibleTo)) {
		return false
	}
	if !strings.Contains(d.NameKey, q.NameContains) {
		return false
	}
	if len(q.States) > 0 && !slices.Contains(q.States, d.Address.State) {
		return false
	}
	return true
}
