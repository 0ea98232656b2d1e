package mongostore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// List entries: what a list selects and orders by, one short string per
// workspace, so that a list never reads the workspaces it does not return.
// On the embedded store every query but an _id equality reads every
// document of its collection, and the cost is per document (about 35 µs,
// however small): one document per workspace made a filtered page at
// 50,000 take 1.9 s (bench/store-scale.md). So the entries are kept as
//
//   - a snapshot: every workspace's entry, packed many to a document in
//     list_chunks and read by _id, plus a pointer to the current
//     generation in store_meta (list_snapshot_mongo.go);
//   - a change log: list_changes, one small document per workspace write
//     since (the entry at that revision, or a tombstone), read whole,
//     without a filter, which is cheap while it is short.
//
// A list merges the two, keeping per workspace the entry of the highest
// revision, then filters and orders in the service, reads the page's
// workspaces by _id and keeps those that still match. A compaction folds
// the changes into a new generation now and then (list_snapshot_mongo.go).
//
// A change is written after each workspace write (Create, Update), before
// it is acknowledged, and again by each publish of the workspace's events
// when it is missing: a write whose change failed is not acknowledged (its
// events are not published), and the publish or the relay writes it. A
// list checks every workspace it returns against the query, so an entry
// that lags for a moment never shows a deleted or foreign workspace.
const (
	ListChangesCollection = "list_changes"
	// StoreMetaCollection holds the snapshot's pointer and the
	// compaction's lease.
	StoreMetaCollection = "store_meta"
)

// entryFields is a workspace as lists see it. Packed (packEntry), it is its
// fields joined by NUL, in this order:
//
//	nameKey NUL id NUL state NUL revision NUL visibleTo[0] NUL visibleTo[1] …
//
// Names, ids and states hold no control characters (domain validation),
// so ordering by the packed string is ordering by (nameKey, id). A
// deleted workspace is a tombstone: visible to nobody, with an empty name
// and state, kept so that a change of an older revision written late
// never brings it back.
type entryFields struct {
	NameKey, ID, State string
	Revision           int64
	// VisibleTo is the workspace itself and its managers; empty for a
	// tombstone.
	VisibleTo []string
}

const entrySep = "\x00"

func packEntry(d *workspaceDoc) string {
	rev := strconv.FormatInt(d.Revision, 10)
	if d.DeletedAt != nil {
		return strings.Join([]string{"", d.ID, "", rev}, entrySep)
	}
	parts := append([]string{d.NameKey, d.ID, d.Address.State, rev, d.ID}, d.Managers...)
	return strings.Join(parts, entrySep)
}

func unpackEntry(s string) entryFields {
	parts := strings.Split(s, entrySep)
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	rev, _ := strconv.ParseInt(parts[3], 10, 64)
	return entryFields{NameKey: parts[0], ID: parts[1], State: parts[2], Revision: rev, VisibleTo: parts[4:]}
}

// compareEntries orders entries as lists do: by nameKey, then id.
func compareEntries(a, b entryFields) int {
	return cmp.Or(strings.Compare(a.NameKey, b.NameKey), strings.Compare(a.ID, b.ID))
}

// past reports whether e comes after position pos (always, without one).
func past(e entryFields, pos *domain.ListPosition) bool {
	return pos == nil || compareEntries(e, entryFields{NameKey: pos.NameKey, ID: pos.ID}) > 0
}

// selects reports whether q selects entry e, but for the position: the
// same test as matches, on the entry.
func selects(e entryFields, q domain.ListQuery) bool {
	return slices.Contains(e.VisibleTo, q.VisibleTo) &&
		strings.Contains(e.NameKey, q.NameContains) &&
		(len(q.States) == 0 || slices.Contains(q.States, e.State))
}

// changeDoc is one workspace write's entry in list_changes. Its _id is
// "<workspace id>@<revision>", so writing it again is a duplicate key and
// changes of one revision are never two.
type changeDoc struct {
	ID    string `bson:"_id"`
	Entry string `bson:"entry"`
}

func changeID(id string, rev int64) string { return id + "@" + strconv.FormatInt(rev, 10) }

// recordEntry logs d's entry as it is at d's revision.
func (r *Repository) recordEntry(ctx context.Context, d *workspaceDoc) error {
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.changes.InsertOne(ctx, changeDoc{ID: changeID(d.ID, d.Revision), Entry: packEntry(d)})
		return err
	})
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return storeError("write list change", err)
	}
	return nil
}

// resyncEntry makes sure the change of the workspace's current revision,
// as read in doc, is logged: after a write whose change failed, it is
// missing. When it was logged and folded into the snapshot since, logging
// it again is harmless (a list keeps one entry per revision).
func (r *Repository) resyncEntry(ctx context.Context, doc *workspaceDoc) error {
	logged, err := r.marked(ctx, r.changes, changeID(doc.ID, doc.Revision))
	if err != nil || logged {
		return err
	}
	return r.recordEntry(ctx, doc)
}

// readChanges reads the change log, at most limit changes (0: all) in no
// particular order: without a filter, which the embedded store reads
// without parsing a query.
func (r *Repository) readChanges(ctx context.Context, limit int) ([]changeDoc, error) {
	opts := options.Find()
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	var docs []changeDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.changes.Find(ctx, bson.D{}, opts)
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, storeError("read list changes", err)
	}
	return docs, nil
}

// listView is every workspace's entry at one moment: a snapshot and the
// changes newer than its entries.
type listView struct {
	snap *snapshot
	// newer holds, by workspace id, the logged entries of a higher
	// revision than the snapshot's.
	newer map[string]entryFields
}

// merge puts the changes over snap, keeping per workspace the highest
// revision.
func merge(snap *snapshot, changes []changeDoc) *listView {
	v := &listView{snap: snap, newer: map[string]entryFields{}}
	for _, c := range changes {
		e := unpackEntry(c.Entry)
		if rev, ok := snap.revs[e.ID]; ok && rev >= e.Revision {
			continue
		}
		if cur, ok := v.newer[e.ID]; ok && cur.Revision >= e.Revision {
			continue
		}
		v.newer[e.ID] = e
	}
	return v
}

// all returns every entry of v in list order, tombstones included: what a
// compaction writes as the next snapshot.
func (v *listView) all() []entryFields {
	out := make([]entryFields, 0, len(v.snap.entries)+len(v.newer))
	for _, e := range v.snap.entries {
		if _, ok := v.newer[e.ID]; !ok {
			out = append(out, e)
		}
	}
	for _, e := range v.newer {
		out = append(out, e)
	}
	slices.SortFunc(out, compareEntries)
	return out
}

// selectEntries returns up to n entries q selects, in list order.
func (v *listView) selectEntries(q domain.ListQuery, n int) []entryFields {
	var fromSnap []entryFields
	start := 0
	if q.After != nil {
		start, _ = slices.BinarySearchFunc(v.snap.entries, entryFields{NameKey: q.After.NameKey, ID: q.After.ID}, compareEntries)
	}
	for _, e := range v.snap.entries[start:] {
		if len(fromSnap) == n {
			break
		}
		if _, replaced := v.newer[e.ID]; replaced || !past(e, q.After) || !selects(e, q) {
			continue
		}
		fromSnap = append(fromSnap, e)
	}
	var fromChanges []entryFields
	for _, e := range v.newer {
		if past(e, q.After) && selects(e, q) {
			fromChanges = append(fromChanges, e)
		}
	}
	if len(fromChanges) == 0 {
		return fromSnap
	}
	out := append(fromSnap, fromChanges...)
	slices.SortFunc(out, compareEntries)
	return out[:min(n, len(out))]
}

// listByEntries selects and orders by the list entries, then reads the
// page's workspaces by _id and keeps those that still match q. When an
// entry lagged behind its workspace (the workspace no longer matches), it
// reads on past the page, so a full page still means more may follow.
func (r *Repository) listByEntries(ctx context.Context, v *listView, q domain.ListQuery) ([]*domain.Workspace, error) {
	limit := max(q.Limit, 1)
	var out []*domain.Workspace
	for range listRefills {
		want := limit - len(out)
		entries := v.selectEntries(q, want)
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
		last := entries[len(entries)-1]
		q.After = &domain.ListPosition{NameKey: last.NameKey, ID: last.ID}
	}
	return out, nil
}

// listRefills bounds the reads of one list past lagging entries.
const listRefills = 3

// readListed reads the workspaces of entries by _id, a few at a time; a
// workspace that is gone is nil.
func (r *Repository) readListed(ctx context.Context, entries []entryFields) ([]*workspaceDoc, error) {
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
