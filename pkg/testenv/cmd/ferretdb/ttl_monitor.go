package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// expire removes, every interval until ctx ends, the documents each TTL
// index holds past its time, over a connection of its own.
func (f *front) expire(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := f.expireAll(ctx); err != nil && ctx.Err() == nil {
			f.log.Warn("removing expired documents failed; trying again", "error", err.Error(), "retry_in", every)
		}
	}
}

// expireAll removes the expired documents of every collection with a TTL
// index.
func (f *front) expireAll(ctx context.Context) error {
	b, err := dialBackend(f.backend)
	if err != nil {
		return err
	}
	defer b.conn.Close()
	defer context.AfterFunc(ctx, func() { _ = b.conn.Close() })()
	for _, ns := range f.ttl.namespaces() {
		if err := f.expireIn(b, ns, time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// expireIn removes the expired documents of one collection under the write
// lock, after checking that its TTL indexes are still FerretDB's: one that
// is gone (dropped while the front was not there to see it, or not
// forgotten for a failed save) is forgotten, never used.
func (f *front) expireIn(b *backendConn, ns namespace, now time.Time) error {
	f.writes.Lock()
	defer f.writes.Unlock()
	existing, err := b.listIndexes(ns.db, ns.collection)
	if err != nil {
		return err
	}
	gone := func(ix ttlIndex) bool {
		fields, ok := existing[ix.Name]
		return !ok || !slices.Equal(fields, []string{ix.Field})
	}
	for _, ix := range f.ttl.in(ns.db, ns.collection) {
		if gone(ix) {
			continue
		}
		cutoff := now.Add(-time.Duration(ix.Seconds) * time.Second)
		ans, err := b.command(bsoncore.NewDocumentBuilder().
			AppendString("delete", ns.collection).
			AppendArray("deletes", bsoncore.NewArrayBuilder().AppendDocument(bsoncore.NewDocumentBuilder().
				AppendDocument("q", bsoncore.NewDocumentBuilder().AppendDocument(ix.Field, bsoncore.NewDocumentBuilder().
					AppendDateTime("$lt", cutoff.UnixMilli()).Build()).Build()).
				AppendInt32("limit", 0).
				Build()).Build()).
			AppendString("$db", ns.db).
			Build())
		if err != nil {
			return fmt.Errorf("remove expired documents of %s.%s: %w", ns.db, ns.collection, err)
		}
		if _, err := ans.LookupErr("writeErrors"); err == nil {
			return fmt.Errorf("remove expired documents of %s.%s: %s", ns.db, ns.collection, ans)
		}
	}
	if !slices.ContainsFunc(f.ttl.in(ns.db, ns.collection), gone) {
		return nil
	}
	return f.ttl.forget(func(ix ttlIndex) bool {
		return ix.DB == ns.db && ix.Collection == ns.collection && gone(ix)
	})
}
