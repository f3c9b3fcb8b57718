package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Handler serves the Graphite API over a [Source]. Build it with [New];
// it is safe for concurrent use.
type Handler struct {
	src  Source
	opts Options
	mux  *http.ServeMux
}

// Paths returns the URL paths the Handler answers, each also with a
// trailing slash; [Handler.Register] mounts them on a mux.
func Paths() []string {
	return []string{"/render", "/metrics/find", "/metrics/expand", "/metrics/index.json", "/functions", "/version", "/tags"}
}

// New returns a Handler reading src. Zero fields of opts take their
// [DefaultOptions] values.
func New(src Source, opts Options) (*Handler, error) {
	if src == nil {
		return nil, errors.New("creating render handler: nil source")
	}
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("creating render handler: %w", err)
	}
	h := &Handler{src: src, opts: opts, mux: http.NewServeMux()}
	route := func(path string, f http.HandlerFunc) {
		h.mux.HandleFunc(path, f)
		h.mux.HandleFunc(path+"/", f)
	}
	route("/render", h.serveRender)
	route("/metrics/find", h.serveFind)
	route("/metrics/expand", h.serveExpand)
	route("/metrics/index.json", h.serveIndex)
	route("/version", h.serveVersion)
	route("/tags", h.serveTags)
	h.mux.HandleFunc("/functions", h.serveFunctions)
	h.mux.HandleFunc("/functions/", h.serveFunctions)
	return h, nil
}

// ServeHTTP implements http.Handler for the paths of [Paths].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Register mounts the Handler on mux at every path of [Paths].
func (h *Handler) Register(mux *http.ServeMux) {
	for _, p := range Paths() {
		mux.Handle(p, h)
		mux.Handle(p+"/", h)
	}
}

// badRequest answers 400 the way graphite-web does, except that the
// message is not HTML-escaped: it is text/plain (nosniff), and Grafana
// shows it to the user verbatim.
func badRequest(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprint(w, "Bad Request: "+msg)
}

// fail answers an evaluation error: 400 for the client's mistakes, 500
// (logged) for storage failures.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if IsInputError(err) {
		badRequest(w, err.Error())
		return
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away
	}
	h.opts.Logger.Error("graphite api request failed", "path", r.URL.Path, "err", err)
	http.Error(w, "internal error: "+err.Error(), http.StatusInternalServerError)
}

// parseForm merges URL query and form body, bounded by MaxBodyBytes.
func (h *Handler) parseForm(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		badRequest(w, "reading form: "+err.Error())
		return false
	}
	return true
}

// times resolves tz, now, from and until as graphite-web does: from
// defaults to -1d, until to now, and the two may come in either order.
func (h *Handler) times(r *http.Request) (loc *time.Location, from, until, now time.Time, err error) {
	loc = h.opts.Location
	if tz := r.Form.Get("tz"); tz != "" {
		if l, lerr := time.LoadLocation(tz); lerr == nil {
			loc = l
		}
	}
	now = h.opts.Now().In(loc)
	if s := r.Form.Get("now"); s != "" {
		if now, err = ParseTime(s, now, loc); err != nil {
			return nil, time.Time{}, time.Time{}, time.Time{}, &InputError{Msg: "invalid now: " + err.Error()}
		}
	}
	until = now
	if s := r.Form.Get("until"); s != "" {
		if until, err = ParseTime(s, now, loc); err != nil {
			return nil, time.Time{}, time.Time{}, time.Time{}, &InputError{Msg: "invalid until: " + err.Error()}
		}
	}
	fromSpec := "-1d"
	if s := r.Form.Get("from"); s != "" {
		fromSpec = s
	}
	if from, err = ParseTime(fromSpec, now, loc); err != nil {
		return nil, time.Time{}, time.Time{}, time.Time{}, &InputError{Msg: "invalid from: " + err.Error()}
	}
	if until.Before(from) {
		from, until = until, from
	}
	return loc, from, until, now, nil
}

func (h *Handler) serveRender(w http.ResponseWriter, r *http.Request) {
	if !h.parseForm(w, r) {
		return
	}
	f := r.Form
	targets := f["target"]
	if len(targets) == 0 {
		targets = f["target[]"]
	}
	var exprs []*Expr
	for _, t := range targets {
		if strings.TrimSpace(t) == "" {
			continue
		}
		if len(exprs) == h.opts.MaxTargets {
			badRequest(w, fmt.Sprintf("more than %d targets", h.opts.MaxTargets))
			return
		}
		if len(t) > h.opts.MaxExprLen {
			badRequest(w, fmt.Sprintf("target longer than %d bytes", h.opts.MaxExprLen))
			return
		}
		e, err := Parse(t, h.opts.MaxDepth)
		if err != nil {
			badRequest(w, fmt.Sprintf("invalid target %q: %v", t, err))
			return
		}
		exprs = append(exprs, e)
	}
	// graphite-web draws a PNG when no format (or an empty one) is given.
	format := "png"
	if f.Has("rawData") {
		format = "raw"
	}
	if v := f.Get("format"); v != "" {
		format = v
	}
	switch format {
	case "json", "csv", "raw", "png", "svg":
	default:
		badRequest(w, fmt.Sprintf("unsupported format %q: this server renders json, csv, raw, png and svg", format))
		return
	}
	maxDataPoints := 0
	if v := f.Get("maxDataPoints"); isDigits(v) {
		n, err := strconv.Atoi(v)
		if err != nil || n > h.opts.MaxDataPoints {
			badRequest(w, fmt.Sprintf("maxDataPoints %s is above the limit %d", v, h.opts.MaxDataPoints))
			return
		}
		maxDataPoints = n
	}
	loc, from, until, now, err := h.times(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if from.Unix() == until.Unix() {
		badRequest(w, "Invalid empty time range")
		return
	}
	req := &request{ctx: r.Context(), src: h.src, opts: &h.opts, maxDataPoints: maxDataPoints, loc: loc, now: h.opts.Now(), fetchNow: now.Unix()}
	ev := &evaluator{req: req, from: from.Unix(), until: until.Unix()}
	var data []*series
	for _, e := range exprs {
		list, err := ev.evalTarget(e)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		data = append(data, list...)
	}
	bp := bodyPool.Get().(*[]byte)
	defer putBody(bp)
	body := (*bp)[:0]
	ctype := "application/json"
	switch format {
	case "json":
		cb := f.Get("jsonp")
		if cb != "" {
			body = append(append(body, cb...), '(')
			ctype = "text/javascript"
		}
		body = renderJSON(body, data, maxDataPoints, f.Has("noNullPoints"))
		if cb != "" {
			body = append(body, ')')
		}
	case "csv":
		body, ctype = renderCSV(body, data, loc), "text/csv"
	case "raw":
		body, ctype = renderRaw(body, data), "text/plain"
	case "png", "svg":
		img, err := renderImage(data, format, f, loc)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		body, ctype = img, "image/png"
		if format == "svg" {
			ctype = "image/svg+xml"
		}
	}
	*bp = body[:0]
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache")
	// a known length: the body goes out in one piece, not in chunks
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// bodyPool holds render bodies for reuse: a glob's JSON is megabytes,
// which allocated (and zeroed) anew per request cost as much as
// spelling it.
var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody bounds the bodies kept for reuse, so that one huge
// answer does not stay pinned.
const maxPooledBody = 16 << 20

func putBody(bp *[]byte) {
	if cap(*bp) <= maxPooledBody {
		bodyPool.Put(bp)
	}
}

// writeJSON answers like graphite-web's json_response_for: ASCII-escaped
// unless the client accepts more than exactly application/json, JSONP on
// request, never cached.
func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	accept := r.Header.Get("Accept")
	ensureASCII := accept == "" || accept == "application/json"
	ctype := "application/json"
	if !ensureASCII {
		ctype += ";charset=utf-8"
	}
	body := appendPyJSON(nil, v, ensureASCII)
	if cb := r.Form.Get("jsonp"); cb != "" {
		body = []byte(cb + "(" + string(body) + ")")
		ctype = "text/javascript"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Pragma", "no-cache")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(body)
}

// intParam reads an integer form value, def when absent.
func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.Form.Get(name)
	if !r.Form.Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, inputErrorf("Invalid int value %q for param %s", v, name)
	}
	return n, nil
}

func (h *Handler) serveFind(w http.ResponseWriter, r *http.Request) {
	if !h.parseForm(w, r) {
		return
	}
	format := r.Form.Get("format")
	if format == "" {
		format = "treejson"
	}
	leavesOnly, err1 := intParam(r, "leavesOnly", 0)
	wildcards, err2 := intParam(r, "wildcards", 0)
	position, err3 := intParam(r, "position", -1)
	if err := errors.Join(err1, err2, err3); err != nil {
		h.fail(w, r, err)
		return
	}
	// The range is validated as graphite-web does but not used: the
	// Source's Find has no time bounds. "-1" means absent.
	for _, name := range []string{"from", "until"} {
		if v := r.Form.Get(name); v != "" && v != "-1" {
			if _, err := ParseTime(v, h.opts.Now(), h.opts.Location); err != nil {
				badRequest(w, fmt.Sprintf("Invalid value %q for param %s: %v", v, name, err))
				return
			}
		}
	}
	if !r.Form.Has("query") {
		badRequest(w, "Missing required parameter 'query'")
		return
	}
	query := r.Form.Get("query")
	if query == "" {
		badRequest(w, "Required parameter 'query' is empty")
		return
	}
	basePath := ""
	if i := strings.LastIndexByte(query, '.'); i >= 0 {
		basePath = query[:i+1]
	}
	if format == "completer" {
		query = strings.ReplaceAll(query, "..", "*.")
		if !strings.HasSuffix(query, "*") {
			query += "*"
		}
	}
	switch format {
	case "treejson", "completer", "json", "nodelist":
	default:
		badRequest(w, "Invalid value for 'format' parameter")
		return
	}
	nodes, err := find(r.Context(), h.src, query, leavesOnly != 0, h.opts.MaxFindResults)
	if err != nil {
		h.fail(w, r, fmt.Errorf("finding %q: %w", query, err))
		return
	}
	switch format {
	case "treejson":
		writeJSON(w, r, treeJSON(nodes, basePath, wildcards != 0))
	case "completer":
		writeJSON(w, r, completerJSON(nodes, wildcards != 0))
	case "json":
		writeJSON(w, r, nodesJSON(nodes))
	case "nodelist":
		writeJSON(w, r, nodelistJSON(nodes, position))
	}
}

func (h *Handler) serveExpand(w http.ResponseWriter, r *http.Request) {
	if !h.parseForm(w, r) {
		return
	}
	leavesOnly, err1 := intParam(r, "leavesOnly", 0)
	groupByExpr, err2 := intParam(r, "groupByExpr", 0)
	if err := errors.Join(err1, err2); err != nil {
		h.fail(w, r, err)
		return
	}
	queries := r.Form["query"]
	if len(queries) > h.opts.MaxTargets {
		badRequest(w, fmt.Sprintf("more than %d queries", h.opts.MaxTargets))
		return
	}
	grouped := obj{}
	union := map[string]bool{}
	total := 0
	for _, q := range queries {
		nodes, err := find(r.Context(), h.src, q, leavesOnly != 0, h.opts.MaxFindResults-total)
		if err != nil {
			h.fail(w, r, fmt.Errorf("expanding %q: %w", q, err))
			return
		}
		total += len(nodes)
		set := map[string]bool{}
		for _, n := range nodes {
			set[n.Path] = true
			union[n.Path] = true
		}
		grouped = append(grouped, kv{q, sortedKeys(set)})
	}
	if groupByExpr != 0 {
		writeJSON(w, r, obj{{"results", grouped}})
		return
	}
	writeJSON(w, r, obj{{"results", sortedKeys(union)}})
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	if !h.parseForm(w, r) {
		return
	}
	paths, err := index(r.Context(), h.src, h.opts.MaxFindResults)
	if err != nil {
		h.fail(w, r, fmt.Errorf("listing metrics: %w", err))
		return
	}
	writeJSON(w, r, paths)
}

func (h *Handler) serveVersion(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, h.opts.Version)
}
