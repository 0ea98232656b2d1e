package testenv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
)

// opMsg is the MongoDB wire protocol's OP_MSG operation code.
const opMsg = 2013

// mongoPing sends {ping: 1, $db: "admin"} to the MongoDB-protocol server at
// addr as one OP_MSG and expects {ok: 1} back: a ready check that needs no
// driver.
func mongoPing(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Ending ctx ends the exchange, even one with a server that accepted
	// the connection and never answers.
	defer context.AfterFunc(ctx, func() { _ = conn.Close() })()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return err
		}
	}

	// The command document, in BSON: an int32 "ping" and a string "$db".
	var doc bytes.Buffer
	doc.Write([]byte{0x10})
	doc.WriteString("ping\x00")
	doc.Write(binary.LittleEndian.AppendUint32(nil, 1))
	doc.Write([]byte{0x02})
	doc.WriteString("$db\x00")
	doc.Write(binary.LittleEndian.AppendUint32(nil, uint32(len("admin")+1)))
	doc.WriteString("admin\x00")
	body := binary.LittleEndian.AppendUint32(nil, uint32(4+doc.Len()+1))
	body = append(append(body, doc.Bytes()...), 0)

	// The message: header (length, request id, response to, op code), flag
	// bits, one section of kind 0 holding the document.
	msg := binary.LittleEndian.AppendUint32(nil, uint32(16+4+1+len(body)))
	msg = binary.LittleEndian.AppendUint32(msg, 1)
	msg = binary.LittleEndian.AppendUint32(msg, 0)
	msg = binary.LittleEndian.AppendUint32(msg, opMsg)
	msg = binary.LittleEndian.AppendUint32(msg, 0)
	msg = append(append(msg, 0), body...)
	if _, err := conn.Write(msg); err != nil {
		return fmt.Errorf("send ping: %w", err)
	}

	var header [16]byte
	if _, err := io.ReadFull(conn, header[:]); err != nil {
		return fmt.Errorf("read the ping's answer: %w", err)
	}
	size := binary.LittleEndian.Uint32(header[0:])
	if op := binary.LittleEndian.Uint32(header[12:]); op != opMsg || size < 16+5 || size > 1<<20 {
		return fmt.Errorf("unexpected answer to ping: op code %d, %d bytes", op, size)
	}
	rest := make([]byte, size-16)
	if _, err := io.ReadFull(conn, rest); err != nil {
		return fmt.Errorf("read the ping's answer: %w", err)
	}
	if rest[4] != 0 {
		return errors.New("unexpected answer to ping: no document")
	}
	if !bsonOK(rest[5:]) {
		return fmt.Errorf("ping answered without ok: 1: %q", rest[5:])
	}
	return nil
}

// bsonOK reports whether the BSON document starts with ok: 1, as a double,
// int32 or int64. A ping's answer is {ok: 1}, so ok is its first element:
// after the document's int32 length, the element type, "ok" as a C string
// and the value.
func bsonOK(doc []byte) bool {
	if len(doc) < 4 {
		return false
	}
	for _, ok := range [][]byte{
		binary.LittleEndian.AppendUint64([]byte{0x01, 'o', 'k', 0}, math.Float64bits(1)),
		binary.LittleEndian.AppendUint32([]byte{0x10, 'o', 'k', 0}, 1),
		binary.LittleEndian.AppendUint64([]byte{0x12, 'o', 'k', 0}, 1),
	} {
		if bytes.HasPrefix(doc[4:], ok) {
			return true
		}
	}
	return false
}
