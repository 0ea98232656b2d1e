package reqstate

import "net/http"

// Writer is a response writer that remembers the status and size of the
// response.
type Writer struct {
	http.ResponseWriter
	status int
	bytes  int64
}

// TrackStatus wraps w, or returns it when it already is a Writer. The
// wrapper is the one in r's state when it is still free.
func TrackStatus(w http.ResponseWriter, r *http.Request) *Writer {
	if sw, ok := w.(*Writer); ok {
		return sw
	}
	if state, ok := r.Context().Value(stateKey).(*State); ok && state.writer.ResponseWriter == nil {
		state.writer.ResponseWriter = w
		return &state.writer
	}
	return &Writer{ResponseWriter: w}
}

// WriteHeader records the status.
func (w *Writer) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write records an implicit 200 and the bytes written.
func (w *Writer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush flushes the underlying writer when it can.
func (w *Writer) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status is the status sent, or 0 while the status line has not been.
func (w *Writer) Status() int { return w.status }

// Bytes is the size of the body written so far.
func (w *Writer) Bytes() int64 { return w.bytes }

// Started reports whether the status line has been sent.
func (w *Writer) Started() bool { return w.status != 0 }
