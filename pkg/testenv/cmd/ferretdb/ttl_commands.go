package main

import (
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// asked is an index a createIndexes asks for.
type asked struct {
	name    string
	fields  []string
	seconds *int32 // nil: not a TTL index
}

// createIndexes forwards a createIndexes without expireAfterSeconds and
// remembers the TTL of each index it creates. An index that exists already
// must be asked for with the TTL it has, as MongoDB requires.
func (f *front) createIndexes(s *session, req message, msg opMsg) error {
	db, collection := msg.db(), msg.operand()
	specs, ok := msg.body.Lookup("indexes").ArrayOK()
	if !ok {
		return s.relay(req) // FerretDB answers the malformed command
	}
	values, _ := specs.Values()
	var want []asked
	anyTTL := false
	for _, v := range values {
		spec, ok := v.DocumentOK()
		if !ok {
			return s.relay(req)
		}
		key, _ := spec.Lookup("key").DocumentOK()
		a := asked{fields: keyFields(key)}
		a.name, _ = spec.Lookup("name").StringValueOK()
		if v, err := spec.LookupErr("expireAfterSeconds"); err == nil {
			seconds, e := ttlSeconds(v, codeCannotCreateIndex)
			if e != nil {
				return s.answerError(req, e)
			}
			if !isTTLField(a.fields) {
				return s.answerError(req, failure(codeCannotCreateIndex,
					"index %s: a TTL index (expireAfterSeconds) takes one field, other than _id", a.name))
			}
			a.seconds, anyTTL = &seconds, true
		}
		want = append(want, a)
	}
	if !anyTTL && len(f.ttl.in(db, collection)) == 0 {
		return s.relay(req)
	}

	existing, err := s.listIndexes(db, collection)
	if err != nil {
		return err
	}
	for _, a := range want {
		if _, ok := existing[a.name]; !ok {
			continue
		}
		var has *int32
		if held, ok := f.ttl.find(db, collection, a.name); ok {
			has = &held.Seconds
		}
		if secondsText(has) != secondsText(a.seconds) {
			return s.answerError(req, failure(codeIndexOptionsConflict,
				"An equivalent index already exists with the same name but different options. Requested index: {name: %q, expireAfterSeconds: %s}, existing index: {name: %q, expireAfterSeconds: %s}",
				a.name, secondsText(a.seconds), a.name, secondsText(has)))
		}
	}

	msg.body = withElement(msg.body, "indexes", func(dst []byte, _ bsoncore.Element) []byte {
		return withArrayOfDocuments(dst, "indexes", specs, func(spec bsoncore.Document) bsoncore.Document {
			return withElement(spec, "expireAfterSeconds", func(dst []byte, _ bsoncore.Element) []byte { return dst })
		})
	})
	ans, err := s.roundTrip(msg.encode(req.requestID(), req.responseTo()))
	if err != nil {
		return err
	}
	if body := answerBody(ans); body != nil && succeeded(body) {
		// The new indexes get the TTL asked for; a TTL remembered under
		// one of their names (its index dropped while this process was
		// not there to see it) is forgotten.
		err := f.ttl.change(func(list []ttlIndex) []ttlIndex {
			for _, a := range want {
				if _, ok := existing[a.name]; ok {
					continue
				}
				list = slices.DeleteFunc(list, func(ix ttlIndex) bool {
					return ix.DB == db && ix.Collection == collection && ix.Name == a.name
				})
				if a.seconds != nil {
					list = append(list, ttlIndex{DB: db, Collection: collection, Name: a.name, Field: a.fields[0], Seconds: *a.seconds})
				}
			}
			return list
		})
		if err != nil {
			f.log.Error("an index was created without the TTL asked for", "db", db, "collection", collection, "error", err.Error())
			return s.answerError(req, failure(codeInternalError, "the indexes were created, but the stand-in could not keep their expireAfterSeconds: %v", err))
		}
	}
	return s.answer(req, ans)
}

// secondsText is an expireAfterSeconds for a message: "none" for nil.
func secondsText(seconds *int32) string {
	if seconds == nil {
		return "none"
	}
	return fmt.Sprint(*seconds)
}

// listIndexes relays a listIndexes and adds expireAfterSeconds to the TTL
// indexes in its answer.
func (f *front) listIndexes(s *session, req message, msg opMsg) error {
	held := f.ttl.in(msg.db(), msg.operand())
	if len(held) == 0 {
		return s.relay(req)
	}
	ans, err := s.roundTrip(req)
	if err != nil {
		return err
	}
	body := answerBody(ans)
	if body == nil || !succeeded(body) {
		return s.answer(req, ans)
	}
	body = withElement(body, "cursor", func(dst []byte, old bsoncore.Element) []byte {
		cursor, ok := old.Value().DocumentOK()
		if !ok {
			return append(dst, old...)
		}
		return bsoncore.AppendDocumentElement(dst, "cursor", withElement(cursor, "firstBatch", func(dst []byte, old bsoncore.Element) []byte {
			batch, ok := old.Value().ArrayOK()
			if !ok {
				return append(dst, old...)
			}
			return withArrayOfDocuments(dst, "firstBatch", batch, func(ix bsoncore.Document) bsoncore.Document {
				name, _ := ix.Lookup("name").StringValueOK()
				at := slices.IndexFunc(held, func(h ttlIndex) bool { return h.Name == name })
				if at < 0 {
					return ix
				}
				start, out := bsoncore.AppendDocumentStart(nil)
				out = append(out, ix[4:len(ix)-1]...)
				out = bsoncore.AppendInt32Element(out, "expireAfterSeconds", held[at].Seconds)
				out, _ = bsoncore.AppendDocumentEnd(out, start)
				return out
			})
		}))
	})
	return s.answer(req, answerTo(req, body))
}

// collModArguments are the arguments besides index that a collMod may
// carry: those every command takes (the driver adds some), and those
// starting with $.
var collModArguments = []string{"index", "lsid", "txnNumber", "autocommit", "writeConcern", "readConcern",
	"comment", "maxTimeMS", "apiVersion", "apiStrict", "apiDeprecationErrors"}

// collMod answers a collMod of an index's expireAfterSeconds itself, as
// MongoDB does (with expireAfterSeconds_old and _new); it also makes a
// single-field index that has none a TTL index. FerretDB implements no
// collMod, so any other is forwarded for it to refuse.
func (f *front) collMod(s *session, req message, msg opMsg) error {
	index, ok := msg.body.Lookup("index").DocumentOK()
	if !ok {
		return s.relay(req)
	}
	db, collection := msg.db(), msg.operand()
	elems, _ := msg.body.Elements()
	for _, e := range elems[1:] {
		if !strings.HasPrefix(e.Key(), "$") && !slices.Contains(collModArguments, e.Key()) {
			return s.answerError(req, failure(codeInvalidOptions, "the stand-in's collMod changes an index's expireAfterSeconds only, not %s", e.Key()))
		}
	}
	name, hasName := index.Lookup("name").StringValueOK()
	v, err := index.LookupErr("expireAfterSeconds")
	if n, _ := index.Elements(); !hasName || err != nil || len(n) != 2 {
		return s.answerError(req, failure(codeInvalidOptions, "the stand-in's collMod takes index: {name, expireAfterSeconds} only"))
	}
	seconds, e := ttlSeconds(v, codeInvalidOptions)
	if e != nil {
		return s.answerError(req, e)
	}
	existing, err := s.listIndexes(db, collection)
	if err != nil {
		return err
	}
	if existing == nil {
		return s.answerError(req, failure(codeNamespaceNotFound, "ns does not exist: %s.%s", db, collection))
	}
	fields, ok := existing[name]
	if !ok {
		return s.answerError(req, failure(codeIndexNotFound, "cannot find index %s for ns %s.%s", name, db, collection))
	}
	if !isTTLField(fields) {
		return s.answerError(req, failure(codeInvalidOptions, "index %s cannot be a TTL index: it has %d fields or is the _id index", name, len(fields)))
	}
	old, had := f.ttl.find(db, collection, name)
	err = f.ttl.change(func(list []ttlIndex) []ttlIndex {
		list = slices.DeleteFunc(list, func(ix ttlIndex) bool { return ix.DB == db && ix.Collection == collection && ix.Name == name })
		return append(list, ttlIndex{DB: db, Collection: collection, Name: name, Field: fields[0], Seconds: seconds})
	})
	if err != nil {
		f.log.Error("a collMod could not be kept", "db", db, "collection", collection, "error", err.Error())
		return s.answerError(req, failure(codeInternalError, "%v", err))
	}
	answer := bsoncore.NewDocumentBuilder()
	if had {
		answer.AppendInt32("expireAfterSeconds_old", old.Seconds)
	}
	answer.AppendInt32("expireAfterSeconds_new", seconds).AppendDouble("ok", 1)
	return s.answer(req, answerTo(req, answer.Build()))
}

// dropIndexes relays a command that removes indexes (drop, dropDatabase,
// dropIndexes) or moves them (renameCollection), and forgets or moves the
// TTL indexes concerned once it succeeded.
func (f *front) dropIndexes(s *session, req message, msg opMsg) error {
	ans, err := s.roundTrip(req)
	if err != nil {
		return err
	}
	if body := answerBody(ans); body != nil && succeeded(body) {
		if err := f.afterDrop(s.backendConn, msg); err != nil {
			// The monitor forgets a TTL whose index is gone before it
			// removes anything by it.
			f.log.Error("dropped TTL indexes are still remembered", "command", msg.command(), "error", err.Error())
		}
	}
	return s.answer(req, ans)
}

func (f *front) afterDrop(b *backendConn, msg opMsg) error {
	db, collection := msg.db(), msg.operand()
	switch msg.command() {
	case "dropDatabase":
		return f.ttl.forget(func(ix ttlIndex) bool { return ix.DB == db })
	case "drop":
		return f.ttl.forget(func(ix ttlIndex) bool { return ix.DB == db && ix.Collection == collection })
	case "renameCollection":
		from := splitNamespace(collection)
		to, _ := msg.body.Lookup("to").StringValueOK()
		target := splitNamespace(to)
		return f.ttl.change(func(list []ttlIndex) []ttlIndex {
			list = slices.DeleteFunc(list, func(ix ttlIndex) bool { return ix.DB == target.db && ix.Collection == target.collection })
			for i, ix := range list {
				if ix.DB == from.db && ix.Collection == from.collection {
					list[i].DB, list[i].Collection = target.db, target.collection
				}
			}
			return list
		})
	default: // dropIndexes: by name, names, key pattern or "*"
		if len(f.ttl.in(db, collection)) == 0 {
			return nil
		}
		existing, err := b.listIndexes(db, collection)
		if err != nil {
			return err
		}
		return f.ttl.forget(func(ix ttlIndex) bool {
			_, ok := existing[ix.Name]
			return ix.DB == db && ix.Collection == collection && !ok
		})
	}
}
