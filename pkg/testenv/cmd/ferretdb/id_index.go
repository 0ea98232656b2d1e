package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	// The SQLite driver FerretDB itself uses (registered as "sqlite").
	_ "modernc.org/sqlite"
)

// FerretDB v1.24's SQLite backend pushes exactly one filter down to SQLite:
// a lone _id equality, as `WHERE _ferretdb_sjson->'$._id' = ?`. Its own
// unique _id index is on `_ferretdb_sjson->"_id"`, an expression SQLite does
// not take for the same one, so every find, update or delete by _id reads
// (and parses the JSON of) every row of the collection: a get by id costs
// about 10 µs per stored workspace, half a second at 50,000 (see
// bench/store-scale.md). idIndexer adds, to every collection table of every
// database in the folder, an index on exactly the expression the pushdown
// uses, so those lookups become index seeks. FerretDB does not know of the
// index (listIndexes does not show it); dropping a collection drops its
// table and the index with it.
type idIndexer struct {
	dir      string
	interval time.Duration
	log      *slog.Logger
	dbs      map[string]*sql.DB // by file
}

// idIndexSuffix names the index added to each table.
const idIndexSuffix = "_id_pushdown"

// run indexes new tables every interval until ctx ends: FerretDB creates a
// collection's table on its first write, so a table is unindexed for at
// most one interval.
func (x *idIndexer) run(ctx context.Context) {
	defer func() {
		for _, db := range x.dbs {
			db.Close()
		}
	}()
	t := time.NewTicker(x.interval)
	defer t.Stop()
	for {
		if err := x.indexAll(ctx); err != nil && ctx.Err() == nil {
			x.log.Warn("indexing _id lookups failed; trying again", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// indexAll adds the missing indexes in every database file of the folder.
func (x *idIndexer) indexAll(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join(x.dir, "*.sqlite"))
	if err != nil {
		return err
	}
	for _, f := range files {
		db, ok := x.dbs[f]
		if !ok {
			// The same settings as FerretDB's own connections: WAL, and
			// waiting on a busy database rather than failing.
			db, err = sql.Open("sqlite", "file:"+f+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)")
			if err != nil {
				return err
			}
			db.SetMaxOpenConns(1)
			x.dbs[f] = db
		}
		if err := indexTables(ctx, db); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
	}
	return nil
}

// indexTables adds the index to each collection table of db lacking it.
func indexTables(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT c.table_name FROM _ferretdb_collections c
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_master m WHERE m.type = 'index' AND m.name = c.table_name || ?)`, idIndexSuffix)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil // a database FerretDB has not set up yet
		}
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range tables {
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, t+idIndexSuffix, t)
		if _, err := db.ExecContext(ctx, q); err != nil {
			if strings.Contains(err.Error(), "no such table") {
				continue // dropped meanwhile
			}
			return err
		}
	}
	return nil
}
