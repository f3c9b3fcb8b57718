package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/influx"
	"github.com/pgts/pgts/internal/ingest/remotewrite"
)

// httpSlot is what one write request uses; the Server has
// http.max-concurrent of them, which bounds both the requests decoded at
// once and the memory they take.
type httpSlot struct {
	influx *influx.Decoder
	rw     *remotewrite.Decoder
	body   []byte
	pts    []ingest.Point
}

// Buffers a slot keeps for the next request; larger ones, left by an
// unusually large request, are let go.
const (
	keepBodyBytes = 1 << 20
	keepPoints    = 16 * batchPoints
)

func (s *Server) httpHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern, name string, h http.Handler) {
		mux.Handle(pattern, s.counted(name, h))
	}
	handle("POST /write", "influx_v1", s.authorizedV1(s.writeHandler(protoInflux, false, s.decodeInflux)))
	handle("POST /api/v2/write", "influx_v2", s.authorized(s.writeHandler(protoInflux, true, s.decodeInflux)))
	handle("POST /api/v1/write", "remote_write", s.authorized(s.writeHandler(protoRemoteWrite, false, s.decodeRemoteWrite)))
	if s.gather != nil {
		handle("GET /metrics", "metrics", s.authorized(promhttp.HandlerFor(s.gather, promhttp.HandlerOpts{})))
	}
	handle("GET /healthz", "healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if h, ok := s.sink.(interface{ Health() error }); ok {
			if err := h.Health(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, "storage failing: "+err.Error()+"\n")
				return
			}
		}
		io.WriteString(w, "ok\n")
	}))
	// Influx clients probe /ping before writing.
	handle("GET /ping", "ping", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	if s.extra != nil {
		handle("/", "extra", s.authorized(s.extra))
	}
	return mux
}

// counted counts requests by handler and status code.
func (s *Server) counted(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		s.m.httpReqs.WithLabelValues(name, strconv.Itoa(sw.code)).Inc()
	})
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// authorized requires http.token, when set, as a bearer token, an Influx
// v2 "Token", or the password of basic authentication (Influx v1
// clients). The comparison takes the same time whatever the token sent.
func (s *Server) authorized(h http.Handler) http.Handler {
	return s.checkToken(h, false)
}

// authorizedV1 is authorized for Influx v1's /write, which also takes the
// password of the u and p query parameters (Telegraf's influxdb output,
// the influx CLI), as InfluxDB 1.x does.
func (s *Server) authorizedV1(h http.Handler) http.Handler {
	return s.checkToken(h, true)
}

func (s *Server) checkToken(h http.Handler, queryCreds bool) http.Handler {
	want := []byte(s.cfg.HTTP.Token)
	if len(want) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		got, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			got, ok = strings.CutPrefix(auth, "Token ")
		}
		if !ok {
			_, got, ok = r.BasicAuth()
		}
		if !ok && queryCreds {
			got, ok = r.URL.Query().Get("p"), r.URL.Query().Has("p")
		}
		if !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pgts"`)
			http.Error(w, "missing or wrong token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// decodeFunc decodes a request body into slot.pts.
type decodeFunc func(r *http.Request, slot *httpSlot) (ingest.Stats, error)

// httpError is a refusal with the status code it answers.
type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// writeHandler serves a write endpoint: it waits for a free slot, reads
// the body within max-body, decodes it with decode and hands the points to
// the sink, waiting while the sink applies backpressure (the client waits
// too, which is how HTTP senders slow down). It answers 204 when every
// entry was stored, 400 when some or all were refused (those accepted are
// stored: a retry would duplicate them), 413 for a body over the limits,
// 503 when storage failed.
func (s *Server) writeHandler(proto string, v2 bool, decode decodeFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Give up waiting on the sink when the client goes or Shutdown
		// stops waiting for the drain.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.stopCtx, cancel)()
		from := r.RemoteAddr

		var slot *httpSlot
		select {
		case slot = <-s.slots:
		case <-ctx.Done():
			writeError(w, http.StatusServiceUnavailable, v2, "shutting down or client gone")
			return
		}
		s.m.httpActive.Inc()
		defer func() {
			if cap(slot.body) > keepBodyBytes {
				slot.body = nil
			}
			if cap(slot.pts) > keepPoints {
				slot.pts = nil
			}
			s.m.httpActive.Dec()
			s.slots <- slot
		}()

		st, err := decode(r, slot)
		if err != nil {
			code := http.StatusBadRequest
			var he *httpError
			if errors.As(err, &he) {
				code = he.code
			} else if errors.Is(err, ingest.ErrLimit) {
				code = http.StatusRequestEntityTooLarge
			}
			s.refuse(proto, from, err, 1)
			writeError(w, code, v2, err.Error())
			return
		}
		s.refuse(proto, from, st.FirstErr, st.Rejected)
		var future int
		var firstFuture error
		slot.pts, future, firstFuture = s.dropFuture(slot.pts)
		s.refuse(proto, from, firstFuture, future)
		s.m.ignored.WithLabelValues(proto).Add(float64(st.Ignored))
		s.m.received.WithLabelValues(proto).Add(float64(len(slot.pts)))
		if err := s.add(ctx, proto, slot.pts); err != nil {
			writeError(w, http.StatusServiceUnavailable, v2, "storing points: "+err.Error())
			return
		}
		if refused := st.Rejected + future; refused > 0 {
			first := st.FirstErr
			if first == nil {
				first = firstFuture
			}
			writeError(w, http.StatusBadRequest, v2, fmt.Sprintf("partial write: %d stored, %d refused; first: %v", len(slot.pts), refused, first))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// dropFuture removes from pts, in place, the points dated beyond the clock
// plus future-tolerance, which the storage would refuse: an HTTP sender is
// told, as for a value it cannot store, rather than answered 204. It
// returns the points kept, how many it removed and an error naming the
// first.
func (s *Server) dropFuture(pts []ingest.Point) (kept []ingest.Point, n int, first error) {
	tol := time.Duration(s.cfg.FutureTolerance)
	horizon := s.now().Add(tol).UnixMicro()
	kept = pts[:0]
	for _, p := range pts {
		if p.Time <= horizon {
			kept = append(kept, p)
			continue
		}
		if n++; first == nil {
			first = fmt.Errorf("%w: %s at %s is more than future-tolerance (%v) ahead of the clock",
				ingest.ErrTimestamp, seriesName(p), time.UnixMicro(p.Time).UTC().Format(time.RFC3339Nano), tol)
		}
	}
	return kept, n, first
}

// seriesName is a point's name with its tags in Graphite's tagged form.
func seriesName(p ingest.Point) string {
	var b strings.Builder
	b.WriteString(p.Name)
	for _, t := range p.Tags {
		b.WriteString(";" + t.Key + "=" + t.Value)
	}
	return b.String()
}

// writeError answers an error as Influx does: JSON {"error": ...} for v1,
// {"code": ..., "message": ...} for v2. Remote-write senders only look at
// the status.
func writeError(w http.ResponseWriter, code int, v2 bool, msg string) {
	var body any = map[string]string{"error": msg}
	if v2 {
		c := "invalid"
		switch code {
		case http.StatusRequestEntityTooLarge:
			c = "request too large"
		case http.StatusServiceUnavailable:
			c = "unavailable"
		case http.StatusUnsupportedMediaType:
			c = "unsupported media type"
		}
		body = map[string]string{"code": c, "message": msg}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if code == http.StatusRequestEntityTooLarge {
		// Do not read the rest of a huge body to keep the connection.
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

// readBody reads r's body into slot.body, refusing one over max bytes
// before reading it when its length is announced, and as soon as it
// exceeds max otherwise. A gzip body (Influx clients may send one) is
// bounded by max once decompressed too.
func (s *Server) readBody(r *http.Request, slot *httpSlot, allowGzip bool) error {
	max := s.limits.MaxBodyBytes
	if r.ContentLength > int64(max) {
		drainBody(r.Body, r.ContentLength)
		return &httpError{http.StatusRequestEntityTooLarge, ingest.LimitError("request body", int(min(r.ContentLength, 1<<62)), max)}
	}
	var body io.Reader = r.Body
	switch enc := strings.ToLower(r.Header.Get("Content-Encoding")); {
	case enc == "" || enc == "identity" || (enc == "snappy" && !allowGzip):
	case enc == "gzip" && allowGzip:
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return &httpError{http.StatusBadRequest, fmt.Errorf("%w: gzip body: %v", ingest.ErrSyntax, err)}
		}
		defer zr.Close()
		body = zr
	default:
		return &httpError{http.StatusUnsupportedMediaType, fmt.Errorf("%w: Content-Encoding %q", ingest.ErrUnsupported, enc)}
	}
	buf := bytes.NewBuffer(slot.body[:0])
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(body, int64(max)+1))
	slot.body = buf.Bytes()
	if err != nil {
		return &httpError{http.StatusBadRequest, fmt.Errorf("%w: reading body: %v", ingest.ErrSyntax, err)}
	}
	if n > int64(max) {
		drainBody(r.Body, drainBytes)
		return &httpError{http.StatusRequestEntityTooLarge, ingest.LimitError("request body", int(n), max)}
	}
	return nil
}

// drainBytes is how much of a refused body is read and thrown away so
// that the client, still sending it, gets the 413 rather than a reset
// connection (closing a socket with unread data resets it).
const drainBytes = 1 << 20

// drainBody reads and discards a refused body of n bytes when it is at
// most drainBytes; a larger one is left unread (the connection closes).
func drainBody(body io.Reader, n int64) {
	if n <= drainBytes {
		io.Copy(io.Discard, io.LimitReader(body, drainBytes)) //nolint:errcheck // best effort
	}
}

func (s *Server) decodeInflux(r *http.Request, slot *httpSlot) (ingest.Stats, error) {
	prec, err := influx.ParsePrecision(r.URL.Query().Get("precision"))
	if err != nil {
		return ingest.Stats{}, fmt.Errorf("%w: precision: %v", ingest.ErrSyntax, err)
	}
	if err := s.readBody(r, slot, true); err != nil {
		return ingest.Stats{}, err
	}
	if slot.influx == nil {
		if slot.influx, err = influx.NewDecoder(s.limits, s.now); err != nil {
			return ingest.Stats{}, err
		}
	}
	var st ingest.Stats
	slot.pts, st, err = slot.influx.Decode(slot.pts[:0], slot.body, prec)
	return st, err
}

func (s *Server) decodeRemoteWrite(r *http.Request, slot *httpSlot) (ingest.Stats, error) {
	if err := s.readBody(r, slot, false); err != nil {
		return ingest.Stats{}, err
	}
	var err error
	if slot.rw == nil {
		if slot.rw, err = remotewrite.NewDecoder(s.limits); err != nil {
			return ingest.Stats{}, err
		}
	}
	// The decoder checks the decompressed length snappy announces against
	// max-decoded before allocating: a snappy bomb costs nothing.
	var st ingest.Stats
	slot.pts, st, err = slot.rw.Decode(slot.pts[:0], slot.body)
	return st, err
}
