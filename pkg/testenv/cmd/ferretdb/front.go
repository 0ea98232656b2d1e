package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"

	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// front is the stand-in's MongoDB-protocol listener. FerretDB v1.24's
// updates are not atomic: it reads the documents a filter matches, then
// writes each by _id in a separate step, so two updateOne({_id, revision:
// n}) racing can both match and both "win". The front relays each client
// connection over a connection of its own to FerretDB (a Unix socket only
// this process knows), and every write command holds one process-wide lock
// from the moment it is forwarded until FerretDB has answered it, so every
// conditional update is atomic with respect to every other write, whichever
// client or replica sends it. Reads pass without the lock.
//
// It also makes up for FerretDB's refusal of TTL indexes (ttl_indexes.go,
// ttl_commands.go, ttl_monitor.go) and for the $push modifiers it ignores
// (push_modifiers.go).
type front struct {
	backend string // FerretDB's Unix socket
	// writes is taken by every write command and every TTL removal.
	writes sync.Locker
	ttl    *ttlIndexes
	log    *slog.Logger

	mu     sync.Mutex
	closed bool
	conns  map[io.Closer]struct{}
	relays sync.WaitGroup
}

// writeCommands are the commands that change data or indexes, as FerretDB
// names them (it also takes findandmodify in lower case).
var writeCommands = map[string]bool{
	"insert": true, "update": true, "delete": true, "findAndModify": true, "findandmodify": true,
	"create": true, "createIndexes": true, "collMod": true, "renameCollection": true,
	"drop": true, "dropDatabase": true, "dropIndexes": true,
}

// serve accepts client connections on l until ctx ends, then closes l and
// every connection, and returns once every relay has stopped.
func (f *front) serve(ctx context.Context, l net.Listener) error {
	stop := context.AfterFunc(ctx, func() {
		_ = l.Close()
		f.closeAll()
	})
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			f.closeAll()
			f.relays.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		f.relays.Go(func() { f.handle(c) })
	}
}

// track adds c to the connections closed at shutdown, or closes it when
// that has begun.
func (f *front) track(c io.Closer) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		_ = c.Close()
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *front) untrack(c io.Closer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.conns, c)
	_ = c.Close()
}

func (f *front) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for c := range f.conns {
		_ = c.Close()
	}
	clear(f.conns)
}

// session is one client connection and its connection to FerretDB.
type session struct {
	*backendConn
	client net.Conn
}

// handle serves one client connection, one request at a time, until either
// side closes it or a message is one the front does not take: then the
// client sees its connection closed, never a hang.
func (f *front) handle(client net.Conn) {
	if !f.track(client) {
		return
	}
	defer f.untrack(client)
	b, err := dialBackend(f.backend)
	if err != nil {
		f.log.Error("cannot reach FerretDB; closing the client's connection", "error", err.Error())
		return
	}
	if !f.track(b.conn) {
		return
	}
	defer f.untrack(b.conn)
	s := &session{backendConn: b, client: client}
	r := bufio.NewReader(client)
	for {
		req, err := readMessage(r)
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			return // the client left, or the front is shutting down
		}
		if err == nil {
			err = f.exchange(s, req)
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				f.log.Warn("closing a client connection", "client", client.RemoteAddr().String(), "error", err.Error())
			}
			return
		}
	}
}

// exchange handles one request and its answer.
func (f *front) exchange(s *session, req message) error {
	switch req.opCode() {
	case wiremessage.OpMsg:
	case wiremessage.OpQuery:
		// FerretDB takes OP_QUERY for the handshake (hello) only.
		return s.relay(req)
	default:
		// OP_COMPRESSED included: drivers compress only when the server
		// offers it, and FerretDB does not.
		return fmt.Errorf("op code %d, which the stand-in does not take", req.opCode())
	}
	msg, err := parseMsg(req)
	if err != nil {
		return err
	}
	cmd := msg.command()
	if !writeCommands[cmd] {
		if cmd == "listIndexes" {
			return f.listIndexes(s, req, msg)
		}
		return s.relay(req)
	}
	f.writes.Lock()
	switch cmd {
	case "createIndexes", "collMod", "drop", "dropDatabase", "dropIndexes", "renameCollection":
		// Rare (a start's Prepare, tests): the lock also covers the TTL
		// state these keep beside FerretDB's.
		defer f.writes.Unlock()
		return f.ddl(s, req, msg, cmd)
	case "update":
		if statements, ok := pushModified(msg); ok {
			defer f.writes.Unlock()
			return f.updateEach(s, req, msg, statements)
		}
	}
	// The lock is released once FerretDB has answered, not once the client
	// has read the answer: a client slow to read holds up no other write.
	ans, err := s.roundTrip(req)
	f.writes.Unlock()
	if err != nil {
		return err
	}
	return s.answer(req, ans)
}

// ddl handles a command that changes collections or indexes.
func (f *front) ddl(s *session, req message, msg opMsg, cmd string) error {
	switch cmd {
	case "createIndexes":
		return f.createIndexes(s, req, msg)
	case "collMod":
		return f.collMod(s, req, msg)
	default: // drop, dropDatabase, dropIndexes, renameCollection
		return f.dropIndexes(s, req, msg)
	}
}

// relay forwards req to FerretDB and its answer to the client, and the
// answers after it while they set moreToCome (a stream the client allowed
// with exhaustAllowed).
func (s *session) relay(req message) error {
	ans, err := s.roundTrip(req)
	for err == nil {
		if err = s.answer(req, ans); err != nil || !ans.moreToCome() {
			return err
		}
		ans, err = readMessage(s.r)
	}
	return err
}

// answer sends the client ans, the answer to req, unless req set
// moreToCome: FerretDB answers every message, but a client that sets it
// (an unacknowledged write) expects no answer.
func (s *session) answer(req, ans message) error {
	if req.moreToCome() {
		return nil
	}
	_, err := s.client.Write(ans)
	return err
}

// answerError answers req with e.
func (s *session) answerError(req message, e *commandError) error {
	return s.answer(req, answerTo(req, e.document()))
}
