package main

import (
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// FerretDB v1.24 takes $push's $each but ignores $position and $slice: it
// appends every value and keeps them all, so a capped list kept newest
// first ($each, $position: 0, $slice: n) would grow without bound, oldest
// first. The front makes up for it. An update command any of whose
// statements pushes with those modifiers is run one statement at a time,
// under the write lock the command holds: each statement with its $push
// reduced to $each, then, in every document it changed, each array it
// pushed to set to what MongoDB would have made of it. $sort, which the
// front does not reproduce, is refused rather than ignored.

// codeBadValue is MongoDB's code for an operator's bad argument.
const codeBadValue = 2

// pushModifier is one field a statement's $push changes with modifiers.
type pushModifier struct {
	path     string
	values   int // how many $each appends
	position *int64
	slice    *int64
}

// apply is the array MongoDB makes: pushed (the values FerretDB appended
// at the end of arr) moved to the position, then the array sliced.
func (m pushModifier) apply(arr []bsoncore.Value) []bsoncore.Value {
	n := max(len(arr)-m.values, 0)
	kept, pushed := arr[:n], arr[n:]
	out := make([]bsoncore.Value, 0, len(arr))
	at := len(kept)
	if m.position != nil {
		p := *m.position
		if p < 0 {
			p = max(int64(len(kept))+p, 0)
		}
		at = int(min(p, int64(len(kept))))
	}
	out = append(append(append(out, kept[:at]...), pushed...), kept[at:]...)
	if m.slice != nil {
		switch s := *m.slice; {
		case s >= 0:
			out = out[:min(int64(len(out)), s)]
		default:
			out = out[max(int64(len(out))+s, 0):]
		}
	}
	return out
}

// reducePush reads a statement's update document u: the fields its $push
// changes with modifiers (none: u is answered as it is), and u with those
// reduced to $each.
func reducePush(u bsoncore.Document) (reduced bsoncore.Document, mods []pushModifier, e *commandError) {
	push, isDoc := u.Lookup("$push").DocumentOK()
	if !isDoc {
		return u, nil, nil
	}
	fields, _ := push.Elements()
	for _, f := range fields {
		spec, isDoc := f.Value().DocumentOK()
		if !isDoc {
			continue
		}
		each, hasEach := spec.Lookup("$each").ArrayOK()
		if !hasEach {
			continue
		}
		m := pushModifier{path: f.Key()}
		values, _ := each.Values()
		m.values = len(values)
		opts, _ := spec.Elements()
		for _, o := range opts {
			switch o.Key() {
			case "$each":
			case "$position", "$slice":
				n, isNumber := o.Value().AsInt64OK()
				if !isNumber {
					return nil, nil, failure(codeBadValue, "the argument to %s in $push must be a number", o.Key())
				}
				if o.Key() == "$position" {
					m.position = &n
				} else {
					m.slice = &n
				}
			default:
				return nil, nil, failure(codeBadValue, "the stand-in's $push takes $each, $position and $slice, not %s", o.Key())
			}
		}
		if m.position != nil || m.slice != nil {
			mods = append(mods, m)
		}
	}
	if len(mods) == 0 {
		return u, nil, nil
	}
	reduced = withElement(u, "$push", func(dst []byte, _ bsoncore.Element) []byte {
		return bsoncore.AppendDocumentElement(dst, "$push", withEachOnly(push))
	})
	return reduced, mods, nil
}

// withEachOnly is a $push document with each field that has $each reduced
// to it, its modifiers dropped.
func withEachOnly(push bsoncore.Document) bsoncore.Document {
	start, dst := bsoncore.AppendDocumentStart(nil)
	fields, _ := push.Elements()
	for _, f := range fields {
		spec, isDoc := f.Value().DocumentOK()
		each, hasEach := spec.Lookup("$each").ArrayOK()
		if !isDoc || !hasEach {
			dst = append(dst, f...)
			continue
		}
		dst = bsoncore.AppendDocumentElement(dst, f.Key(), bsoncore.NewDocumentBuilder().AppendArray("$each", each).Build())
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// updateStatements are an update command's statements, from its document
// or its document sequence (where drivers put them).
func updateStatements(msg opMsg) ([]bsoncore.Document, error) {
	if arr, ok := msg.body.Lookup("updates").ArrayOK(); ok {
		values, _ := arr.Values()
		out := make([]bsoncore.Document, len(values))
		for i, v := range values {
			if out[i], ok = v.DocumentOK(); !ok {
				return nil, errors.New("an update statement that is not a document")
			}
		}
		return out, nil
	}
	for _, seq := range msg.sequences {
		_, rem, _ := wiremessage.ReadMsgSectionType(seq)
		id, docs, _, ok := wiremessage.ReadMsgSectionDocumentSequence(rem)
		if ok && id == "updates" {
			return docs, nil
		}
	}
	return nil, nil
}

// pushModified returns the statements of msg, an update command, when one
// of them pushes with $position or $slice (or with a modifier the front
// refuses); ok is false otherwise, and FerretDB takes the command as it
// came.
func pushModified(msg opMsg) (statements []bsoncore.Document, ok bool) {
	statements, err := updateStatements(msg)
	if err != nil {
		return nil, false
	}
	for _, st := range statements {
		u, isDoc := st.Lookup("u").DocumentOK()
		if !isDoc {
			continue // a pipeline: FerretDB answers it
		}
		if _, mods, e := reducePush(u); len(mods) > 0 || e != nil {
			return statements, true
		}
	}
	return nil, false
}

// updateEach answers an update command whose statements push with
// modifiers, running them one at a time (updateStatement) and adding
// their answers up as MongoDB's one answer: n, nModified, upserted and
// writeErrors, each statement's index its place in the command. An ordered
// command stops at its first write error.
func (f *front) updateEach(s *session, req message, msg opMsg, statements []bsoncore.Document) error {
	ordered := true
	if v, ok := msg.body.Lookup("ordered").BooleanOK(); ok {
		ordered = v
	}
	var n, modified int64
	upserted, writeErrors := bsoncore.NewArrayBuilder(), bsoncore.NewArrayBuilder()
	var anyUpserted, anyError bool
	for i, st := range statements {
		ans, err := updateStatement(s.backendConn, msg, st)
		var e *commandError
		if errors.As(err, &e) {
			return s.answerError(req, e)
		}
		if err != nil {
			return err
		}
		n += lookupInt(ans, "n")
		modified += lookupInt(ans, "nModified")
		for _, u := range documents(ans, "upserted") {
			anyUpserted = true
			upserted.AppendDocument(withElement(u, "index", func(dst []byte, _ bsoncore.Element) []byte {
				return bsoncore.AppendInt32Element(dst, "index", int32(i))
			}))
		}
		failed := documents(ans, "writeErrors")
		for _, w := range failed {
			anyError = true
			writeErrors.AppendDocument(withElement(w, "index", func(dst []byte, _ bsoncore.Element) []byte {
				return bsoncore.AppendInt32Element(dst, "index", int32(i))
			}))
		}
		if len(failed) > 0 && ordered {
			break
		}
	}
	answer := bsoncore.NewDocumentBuilder().AppendInt32("n", int32(n)).AppendInt32("nModified", int32(modified))
	if anyUpserted {
		answer.AppendArray("upserted", upserted.Build())
	}
	if anyError {
		answer.AppendArray("writeErrors", writeErrors.Build())
	}
	return s.answer(req, answerTo(req, answer.AppendDouble("ok", 1).Build()))
}

// updateStatement runs one statement of msg, an update command, with its
// $push reduced to $each, then sets each array it pushed to with modifiers
// in the documents it changed, and answers FerretDB's answer to the
// statement.
func updateStatement(b *backendConn, msg opMsg, st bsoncore.Document) (bsoncore.Document, error) {
	u, _ := st.Lookup("u").DocumentOK()
	reduced, mods, e := reducePush(u)
	if e != nil {
		return nil, e
	}
	one := withElement(st, "u", func(dst []byte, _ bsoncore.Element) []byte {
		return bsoncore.AppendDocumentElement(dst, "u", reduced)
	})
	ans, err := b.command(withStatement(msg.body, one))
	if err != nil || len(mods) == 0 || lookupInt(ans, "n") == 0 {
		return ans, err
	}
	db, collection := msg.db(), msg.operand()
	filter, _ := st.Lookup("q").DocumentOK()
	multi, _ := st.Lookup("multi").BooleanOK()
	if ups := documents(ans, "upserted"); len(ups) > 0 {
		filter = bsoncore.NewDocumentBuilder().AppendValue("_id", ups[0].Lookup("_id")).Build()
	}
	changed, err := find(b, db, collection, filter, multi)
	if err != nil {
		return nil, err
	}
	for _, doc := range changed {
		set := bsoncore.NewDocumentBuilder()
		for _, m := range mods {
			arr, ok := doc.Lookup(strings.Split(m.path, ".")...).ArrayOK()
			if !ok {
				continue
			}
			values, _ := arr.Values()
			set.AppendArray(m.path, bsoncore.BuildArray(nil, m.apply(values)...))
		}
		fix := bsoncore.NewDocumentBuilder().
			AppendDocument("q", bsoncore.NewDocumentBuilder().AppendValue("_id", doc.Lookup("_id")).Build()).
			AppendDocument("u", bsoncore.NewDocumentBuilder().AppendDocument("$set", set.Build()).Build()).
			Build()
		cmd := bsoncore.NewDocumentBuilder().
			AppendString("update", collection).
			AppendArray("updates", bsoncore.NewArrayBuilder().AppendDocument(fix).Build()).
			AppendString("$db", db).
			Build()
		if _, err := b.command(cmd); err != nil {
			return nil, fmt.Errorf("apply $push's modifiers in %s.%s: %w", db, collection, err)
		}
	}
	return ans, nil
}

// withStatement is the update command body with st as its one statement,
// ordered, and every other argument as it came.
func withStatement(body bsoncore.Document, st bsoncore.Document) bsoncore.Document {
	start, dst := bsoncore.AppendDocumentStart(nil)
	elems, _ := body.Elements()
	for _, e := range elems {
		if k := e.Key(); k != "updates" && k != "ordered" {
			dst = append(dst, e...)
		}
	}
	dst = bsoncore.AppendArrayElement(dst, "updates", bsoncore.NewArrayBuilder().AppendDocument(st).Build())
	dst = bsoncore.AppendBooleanElement(dst, "ordered", true)
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// find reads the documents filter matches (the first one unless multi),
// batch after batch.
func find(b *backendConn, db, collection string, filter bsoncore.Document, multi bool) ([]bsoncore.Document, error) {
	cmd := bsoncore.NewDocumentBuilder().AppendString("find", collection).AppendDocument("filter", filter)
	if !multi {
		cmd.AppendInt32("limit", 1)
	}
	ans, err := b.command(cmd.AppendString("$db", db).Build())
	var out []bsoncore.Document
	for batch := "firstBatch"; ; batch = "nextBatch" {
		if err != nil {
			return nil, fmt.Errorf("find what a $push changed in %s.%s: %w", db, collection, err)
		}
		out = append(out, documents(ans.Lookup("cursor").Document(), batch)...)
		id, _ := ans.Lookup("cursor", "id").AsInt64OK()
		if id == 0 {
			return out, nil
		}
		ans, err = b.command(bsoncore.NewDocumentBuilder().
			AppendInt64("getMore", id).AppendString("collection", collection).AppendString("$db", db).Build())
	}
}

// lookupInt is a number of an answer, 0 when missing.
func lookupInt(doc bsoncore.Document, key string) int64 {
	n, _ := doc.Lookup(key).AsInt64OK()
	return n
}

// documents are the documents of an answer's array key.
func documents(doc bsoncore.Document, key string) []bsoncore.Document {
	arr, ok := doc.Lookup(key).ArrayOK()
	if !ok {
		return nil
	}
	values, _ := arr.Values()
	out := make([]bsoncore.Document, 0, len(values))
	for _, v := range values {
		if d, ok := v.DocumentOK(); ok {
			out = append(out, d)
		}
	}
	return out
}
