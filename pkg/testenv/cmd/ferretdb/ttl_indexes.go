package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// TTL indexes. FerretDB v1.24 refuses expireAfterSeconds, so the front
// makes up for it: a createIndexes is forwarded without it and the front
// remembers it (in ttlFile, in the data folder, so it survives a restart),
// listIndexes answers show it again, collMod changes it, and dropping the
// index, its collection or its database forgets it. A monitor (expire)
// removes what each one holds past its time, as MongoDB's TTL monitor does.
// Single-field indexes only, as on MongoDB.

// ttlFile names the file in the data folder that keeps the TTL indexes.
const ttlFile = "ttl-indexes.json"

// ttlIndex is one TTL index: the documents of db.collection whose field
// holds a date (or an array holding one) older than Seconds are removed.
type ttlIndex struct {
	DB         string `json:"db"`
	Collection string `json:"collection"`
	Name       string `json:"name"`
	Field      string `json:"field"`
	Seconds    int32  `json:"expireAfterSeconds"`
}

// ttlIndexes are the TTL indexes the front knows of. They change only
// under the front's write lock; mu lets listIndexes read them meanwhile.
type ttlIndexes struct {
	file string
	mu   sync.RWMutex
	list []ttlIndex
}

// loadTTLIndexes reads file; a missing file holds none.
func loadTTLIndexes(file string) (*ttlIndexes, error) {
	t := &ttlIndexes{file: file}
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &t.list); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return t, nil
}

// in returns the TTL indexes of db.collection.
func (t *ttlIndexes) in(db, collection string) []ttlIndex {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []ttlIndex
	for _, ix := range t.list {
		if ix.DB == db && ix.Collection == collection {
			out = append(out, ix)
		}
	}
	return out
}

// find returns the TTL index db.collection.name, if there is one.
func (t *ttlIndexes) find(db, collection, name string) (ttlIndex, bool) {
	for _, ix := range t.in(db, collection) {
		if ix.Name == name {
			return ix, true
		}
	}
	return ttlIndex{}, false
}

// namespace is a collection: db.collection.
type namespace struct{ db, collection string }

// namespaces returns the collections that have a TTL index.
func (t *ttlIndexes) namespaces() []namespace {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []namespace
	for _, ix := range t.list {
		if ns := (namespace{ix.DB, ix.Collection}); !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// change applies edit to a copy of the list and saves it: the list
// changes only once it is saved.
func (t *ttlIndexes) change(edit func([]ttlIndex) []ttlIndex) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := edit(slices.Clone(t.list))
	slices.SortFunc(list, func(a, b ttlIndex) int {
		return cmp.Or(cmp.Compare(a.DB, b.DB), cmp.Compare(a.Collection, b.Collection), cmp.Compare(a.Name, b.Name))
	})
	if err := writeFileAtomically(t.file, list); err != nil {
		return fmt.Errorf("save the TTL indexes: %w", err)
	}
	t.list = list
	return nil
}

// forget removes the TTL indexes for which gone is true.
func (t *ttlIndexes) forget(gone func(ttlIndex) bool) error {
	return t.change(func(list []ttlIndex) []ttlIndex { return slices.DeleteFunc(list, gone) })
}

// writeFileAtomically writes v as JSON to file through a temporary file
// renamed over it, so a crash leaves the old list or the new one.
func writeFileAtomically(file string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// ttlSeconds reads an expireAfterSeconds: a number from 0 to the int32
// maximum, as MongoDB takes it; code is the error's code.
func ttlSeconds(v bsoncore.Value, code int32) (int32, *commandError) {
	f, ok := v.AsFloat64OK()
	if !ok || math.IsNaN(f) || f < 0 || f > math.MaxInt32 {
		return 0, failure(code, "expireAfterSeconds must be a number from 0 to %d, got %s", math.MaxInt32, v)
	}
	return int32(f), nil
}

// keyFields are the fields of an index key document, in order.
func keyFields(key bsoncore.Document) []string {
	elems, _ := key.Elements()
	fields := make([]string, len(elems))
	for i, e := range elems {
		fields[i] = e.Key()
	}
	return fields
}

// listIndexes returns the key fields of db.collection's indexes by name, as
// FerretDB holds them; nil when the collection does not exist.
func (b *backendConn) listIndexes(db, collection string) (map[string][]string, error) {
	ans, err := b.command(bsoncore.NewDocumentBuilder().
		AppendString("listIndexes", collection).
		AppendString("$db", db).
		Build())
	var ce *commandError
	if errors.As(err, &ce) && ce.code == codeNamespaceNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the indexes of %s.%s: %w", db, collection, err)
	}
	// FerretDB answers with every index in the first batch.
	if id, _ := ans.Lookup("cursor", "id").AsInt64OK(); id != 0 {
		return nil, fmt.Errorf("list the indexes of %s.%s: more than one batch", db, collection)
	}
	batch, _ := ans.Lookup("cursor", "firstBatch").ArrayOK()
	values, _ := batch.Values()
	out := make(map[string][]string, len(values))
	for _, v := range values {
		ix, _ := v.DocumentOK()
		name, _ := ix.Lookup("name").StringValueOK()
		key, _ := ix.Lookup("key").DocumentOK()
		out[name] = keyFields(key)
	}
	return out, nil
}

// isTTLField reports whether an index on fields can be a TTL index.
func isTTLField(fields []string) bool { return len(fields) == 1 && fields[0] != "_id" }

// splitNamespace splits "db.collection".
func splitNamespace(ns string) namespace {
	db, collection, _ := strings.Cut(ns, ".")
	return namespace{db, collection}
}
