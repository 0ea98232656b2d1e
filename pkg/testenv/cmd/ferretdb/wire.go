package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// The MongoDB wire protocol, as much of it as the front needs: messages are
// read whole, an OP_MSG's flag bits and command document are looked at, and
// the front's own requests and answers are built. BSON is read and written
// with the driver's bsoncore.

const (
	headerSize = 16
	// maxMessageSize bounds a message either way: FerretDB's own bound
	// (maxMessageSizeBytes in its hello answer).
	maxMessageSize = 48_000_000
)

// message is one wire-protocol message, its 16-byte header included.
type message []byte

// readMessage reads one message from r.
func readMessage(r io.Reader) (message, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.LittleEndian.Uint32(size[:]))
	if n < headerSize || n > maxMessageSize {
		return nil, fmt.Errorf("a message of %d bytes", n)
	}
	m := make(message, n)
	copy(m, size[:])
	if _, err := io.ReadFull(r, m[4:]); err != nil {
		return nil, err
	}
	return m, nil
}

func (m message) requestID() int32 { return int32(binary.LittleEndian.Uint32(m[4:])) }

func (m message) responseTo() int32 { return int32(binary.LittleEndian.Uint32(m[8:])) }

func (m message) opCode() wiremessage.OpCode {
	return wiremessage.OpCode(binary.LittleEndian.Uint32(m[12:]))
}

// moreToCome reports whether m is an OP_MSG after which no answer follows
// (a request) or another answer follows (an answer).
func (m message) moreToCome() bool { return wiremessage.IsMsgMoreToCome(m) }

// opMsg is an OP_MSG: its flag bits, its command document (the section of
// kind 0) and its document sequences (sections of kind 1, kept as they
// came: insert's documents, update's updates, delete's deletes).
type opMsg struct {
	flags     wiremessage.MsgFlag
	body      bsoncore.Document
	sequences [][]byte
}

// parseMsg reads an OP_MSG; its checksum, if any, is not checked (the
// front rebuilds only messages it changes, without one).
func parseMsg(m message) (opMsg, error) {
	var msg opMsg
	rem := []byte(m[headerSize:])
	flags, rem, ok := wiremessage.ReadMsgFlags(rem)
	if !ok {
		return msg, errors.New("an OP_MSG without flag bits")
	}
	msg.flags = flags
	if flags&wiremessage.ChecksumPresent != 0 {
		if len(rem) < 4 {
			return msg, errors.New("an OP_MSG without its checksum")
		}
		rem = rem[:len(rem)-4]
	}
	for len(rem) > 0 {
		section := rem
		var kind wiremessage.SectionType
		kind, rem, _ = wiremessage.ReadMsgSectionType(rem)
		switch kind {
		case wiremessage.SingleDocument:
			var doc bsoncore.Document
			if doc, rem, ok = wiremessage.ReadMsgSectionSingleDocument(rem); !ok || msg.body != nil {
				return msg, errors.New("an OP_MSG with a malformed or second command document")
			}
			msg.body = doc
		case wiremessage.DocumentSequence:
			if _, _, rem, ok = wiremessage.ReadMsgSectionRawDocumentSequence(rem); !ok {
				return msg, errors.New("an OP_MSG with a malformed document sequence")
			}
			msg.sequences = append(msg.sequences, section[:len(section)-len(rem)])
		default:
			return msg, fmt.Errorf("an OP_MSG with a section of kind %d", kind)
		}
	}
	if msg.body == nil {
		return msg, errors.New("an OP_MSG without a command document")
	}
	if err := msg.body.Validate(); err != nil {
		return msg, fmt.Errorf("an OP_MSG's command document: %w", err)
	}
	return msg, nil
}

// command is the command's name: the first key of its document.
func (msg opMsg) command() string {
	e, err := msg.body.IndexErr(0)
	if err != nil {
		return ""
	}
	return e.Key()
}

// operand is the command's first value as a string: the collection most
// commands name.
func (msg opMsg) operand() string {
	e, err := msg.body.IndexErr(0)
	if err != nil {
		return ""
	}
	s, _ := e.Value().StringValueOK()
	return s
}

// db is the database the command is for ($db).
func (msg opMsg) db() string {
	s, _ := msg.body.Lookup("$db").StringValueOK()
	return s
}

// encode is msg as a message with the given header fields, without a
// checksum.
func (msg opMsg) encode(requestID, responseTo int32) message {
	start, b := wiremessage.AppendHeaderStart(nil, requestID, responseTo, wiremessage.OpMsg)
	b = wiremessage.AppendMsgFlags(b, msg.flags&^wiremessage.ChecksumPresent)
	b = wiremessage.AppendMsgSectionType(b, wiremessage.SingleDocument)
	b = append(b, msg.body...)
	for _, seq := range msg.sequences {
		b = append(b, seq...)
	}
	return bsoncore.UpdateLength(b, start, int32(len(b)-int(start)))
}

// answerTo is an OP_MSG answering req with body.
func answerTo(req message, body bsoncore.Document) message {
	return opMsg{body: body}.encode(wiremessage.NextRequestID(), req.requestID())
}

// answerBody is the command document of an OP_MSG answer, nil when it is
// none.
func answerBody(ans message) bsoncore.Document {
	if ans.opCode() != wiremessage.OpMsg {
		return nil
	}
	msg, err := parseMsg(ans)
	if err != nil {
		return nil
	}
	return msg.body
}

// succeeded reports whether a command's answer says ok: 1.
func succeeded(body bsoncore.Document) bool {
	ok, isNumber := body.Lookup("ok").AsFloat64OK()
	return isNumber && ok == 1
}

// MongoDB's error codes the front answers with.
const (
	codeInternalError        = 1
	codeNamespaceNotFound    = 26
	codeIndexNotFound        = 27
	codeCannotCreateIndex    = 67
	codeInvalidOptions       = 72
	codeIndexOptionsConflict = 85
)

var codeNames = map[int32]string{
	codeInternalError:        "InternalError",
	codeNamespaceNotFound:    "NamespaceNotFound",
	codeIndexNotFound:        "IndexNotFound",
	codeCannotCreateIndex:    "CannotCreateIndex",
	codeInvalidOptions:       "InvalidOptions",
	codeIndexOptionsConflict: "IndexOptionsConflict",
}

// commandError is a command's failure, as MongoDB answers it.
type commandError struct {
	code    int32
	message string
}

func (e *commandError) Error() string {
	return fmt.Sprintf("%s (%d): %s", codeNames[e.code], e.code, e.message)
}

func failure(code int32, format string, args ...any) *commandError {
	return &commandError{code: code, message: fmt.Sprintf(format, args...)}
}

// document is the error's answer: {ok: 0, errmsg, code, codeName}.
func (e *commandError) document() bsoncore.Document {
	return bsoncore.NewDocumentBuilder().
		AppendDouble("ok", 0).
		AppendString("errmsg", e.message).
		AppendInt32("code", e.code).
		AppendString("codeName", codeNames[e.code]).
		Build()
}

// errorOf is the error an answer without ok: 1 carries.
func errorOf(body bsoncore.Document) *commandError {
	code, _ := body.Lookup("code").AsInt32OK()
	msg, _ := body.Lookup("errmsg").StringValueOK()
	return &commandError{code: code, message: msg}
}

// backendConn is a connection to FerretDB.
type backendConn struct {
	conn net.Conn
	r    *bufio.Reader
}

func dialBackend(socket string) (*backendConn, error) {
	c, err := net.Dial("unix", socket)
	if err != nil {
		return nil, err
	}
	return &backendConn{conn: c, r: bufio.NewReader(c)}, nil
}

// roundTrip sends req and reads FerretDB's answer to it. FerretDB answers
// every message, even one with moreToCome set.
func (b *backendConn) roundTrip(req message) (message, error) {
	if _, err := b.conn.Write(req); err != nil {
		return nil, fmt.Errorf("FerretDB: %w", err)
	}
	ans, err := readMessage(b.r)
	if err != nil {
		return nil, fmt.Errorf("FerretDB: %w", err)
	}
	if ans.responseTo() != req.requestID() {
		return nil, fmt.Errorf("an answer to request %d, want one to %d", ans.responseTo(), req.requestID())
	}
	return ans, nil
}

// commandTimeout bounds each of the front's own commands: it never waits on
// a FerretDB that does not answer.
const commandTimeout = time.Minute

// command runs the front's own command cmd and returns its answer; an answer
// without ok: 1 is a *commandError.
func (b *backendConn) command(cmd bsoncore.Document) (bsoncore.Document, error) {
	if err := b.conn.SetDeadline(time.Now().Add(commandTimeout)); err != nil {
		return nil, err
	}
	defer b.conn.SetDeadline(time.Time{})
	ans, err := b.roundTrip(opMsg{body: cmd}.encode(wiremessage.NextRequestID(), 0))
	if err != nil {
		return nil, err
	}
	body := answerBody(ans)
	if body == nil {
		return nil, errors.New("an answer that is not an OP_MSG")
	}
	if !succeeded(body) {
		return nil, errorOf(body)
	}
	return body, nil
}

// withElement returns doc with the element named key replaced by what put
// appends in its place (nothing drops it); doc is unchanged when it has no
// such element.
func withElement(doc bsoncore.Document, key string, put func(dst []byte, old bsoncore.Element) []byte) bsoncore.Document {
	start, dst := bsoncore.AppendDocumentStart(nil)
	elems, _ := doc.Elements()
	for _, e := range elems {
		if e.Key() == key {
			dst = put(dst, e)
		} else {
			dst = append(dst, e...)
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// withArrayOfDocuments appends the array element key holding each document
// of arr changed by change.
func withArrayOfDocuments(dst []byte, key string, arr bsoncore.Array, change func(bsoncore.Document) bsoncore.Document) []byte {
	start, dst := bsoncore.AppendArrayElementStart(dst, key)
	values, _ := arr.Values()
	for i, v := range values {
		doc, ok := v.DocumentOK()
		if !ok {
			dst = bsoncore.AppendValueElement(dst, strconv.Itoa(i), v)
			continue
		}
		dst = bsoncore.AppendDocumentElement(dst, strconv.Itoa(i), change(doc))
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, start)
	return dst
}
