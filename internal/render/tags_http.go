package render

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The /tags endpoints, in graphite-web 1.1's shapes (tags/views.py with
// its local database tag store):
//
//	/tags                    [{"id": 1, "tag": "dc"}, ...]            ?filter=re&limit=n
//	/tags/<tag>              {"id": 1, "tag": "dc", "values": [{"id": 1, "value": "eu", "count": 2}]}
//	/tags/findSeries         ["cpu;dc=eu;host=a", ...]                 ?expr=...
//	/tags/autoComplete/tags  ["dc", "host"]                            ?expr=...&tagPrefix=&limit=
//	/tags/autoComplete/values ["eu", "us"]                             ?expr=...&tag=&valuePrefix=&limit=
//
// Ids are ordinals in the sorted lists (graphite-web shows its database
// row ids, which no other store can reproduce). Errors are
// {"error": "..."} with status 400, as graphite-web's jsonResponse.

// autoCompleteLimit is graphite-web's TAGDB_AUTOCOMPLETE_LIMIT default.
const autoCompleteLimit = 100

func (h *Handler) serveTags(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tagsError(w, http.StatusBadRequest, "reading query: "+err.Error())
		return
	}
	sub := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/tags"), "/")
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	post := r.Method == http.MethodPost
	switch sub {
	case "findSeries", "autoComplete/tags", "autoComplete/values":
		if !get && !post {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
	case "tagSeries", "tagMultiSeries", "delSeries":
		tagsError(w, http.StatusBadRequest, "series are tagged by sending them tagged; "+sub+" is not supported")
		return
	default:
		if !get {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
	}
	exprs := r.Form["expr"]
	if len(exprs) == 0 {
		exprs = r.Form["expr[]"]
	}
	limit := 0
	if v := r.Form.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			tagsError(w, http.StatusBadRequest, "invalid limit "+strconv.Quote(v))
			return
		}
		limit = n
	}
	var out any
	var err error
	switch sub {
	case "":
		out, err = h.tagList(r, r.Form.Get("filter"), limit)
	case "findSeries":
		if len(exprs) == 0 {
			tagsError(w, http.StatusBadRequest, "no tag expressions specified")
			return
		}
		var names []string
		if names, err = h.findTagged(r, exprs); err == nil {
			out = names
		}
	case "autoComplete/tags":
		if limit == 0 {
			limit = autoCompleteLimit
		}
		out, err = h.autoCompleteTags(r, exprs, r.Form.Get("tagPrefix"), limit)
	case "autoComplete/values":
		tag := r.Form.Get("tag")
		if tag == "" {
			tagsError(w, http.StatusBadRequest, "no tag specified")
			return
		}
		if limit == 0 {
			limit = autoCompleteLimit
		}
		out, err = h.autoCompleteValues(r, exprs, tag, r.Form.Get("valuePrefix"), limit)
	default:
		out, err = h.tagDetails(r, sub, r.Form.Get("filter"), limit)
	}
	if err != nil {
		status := http.StatusInternalServerError
		if IsInputError(err) {
			status = http.StatusBadRequest
		}
		tagsError(w, status, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(appendPyJSON(nil, out, true))
}

func tagsError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(appendPyJSON(nil, obj{{"error", msg}}, true))
}

// allTagged returns every tagged series name with its tags, sorted.
func (h *Handler) allTagged(r *http.Request) ([]string, map[string]tagSet, error) {
	ts, ok := h.src.(TagSource)
	if !ok {
		return nil, nil, nil
	}
	names, err := ts.FindTagged(r.Context(), nil)
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(names)
	tags := make(map[string]tagSet, len(names))
	kept := names[:0]
	for _, n := range names {
		t, err := ParseTaggedName(n)
		if err != nil {
			continue
		}
		tags[n] = t
		kept = append(kept, n)
	}
	return kept, tags, nil
}

// findTagged is graphite-web's find_series: the matching names, sorted.
func (h *Handler) findTagged(r *http.Request, exprs []string) ([]string, error) {
	terms := make([]TagTerm, len(exprs))
	for i, e := range exprs {
		t, err := ParseTagTerm(e)
		if err != nil {
			return nil, &InputError{Msg: "Invalid tagspec " + e}
		}
		terms[i] = t
	}
	f, err := compileTagFilter(terms)
	if err != nil {
		return nil, err
	}
	out := []string{}
	ts, ok := h.src.(TagSource)
	if !ok {
		return out, nil
	}
	cands, err := ts.FindTagged(r.Context(), terms)
	if err != nil {
		return nil, err
	}
	for _, c := range cands {
		if f.match(c) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out, nil
}

// anchoredFilter compiles a /tags filter, anchored at the start as
// graphite-web anchors it; "" matches everything.
func anchoredFilter(f string) (*regexp.Regexp, error) {
	if f == "" {
		return nil, nil
	}
	if !strings.HasPrefix(f, "^") {
		f = "^(" + f + ")"
	}
	if len(f) > maxRegexpLen {
		return nil, inputErrorf("filter longer than %d bytes", maxRegexpLen)
	}
	re, err := regexp.Compile(f)
	if err != nil {
		return nil, inputErrorf("invalid filter %q: %v", f, err)
	}
	return re, nil
}

// tagCounts returns, for every tag, the number of series per value.
func tagCounts(names []string, tags map[string]tagSet) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, n := range names {
		for _, t := range tags[n] {
			if out[t.k] == nil {
				out[t.k] = map[string]int{}
			}
			out[t.k][t.v]++
		}
	}
	return out
}

func (h *Handler) tagList(r *http.Request, filter string, limit int) (any, error) {
	re, err := anchoredFilter(filter)
	if err != nil {
		return nil, err
	}
	names, tags, err := h.allTagged(r)
	if err != nil {
		return nil, err
	}
	counts := tagCounts(names, tags)
	all := make([]string, 0, len(counts))
	for k := range counts {
		all = append(all, k)
	}
	sort.Strings(all)
	out := []any{}
	for i, k := range all {
		if re != nil && !re.MatchString(k) {
			continue
		}
		if limit > 0 && len(out) >= limit {
			break
		}
		out = append(out, obj{{"id", i + 1}, {"tag", k}})
	}
	return out, nil
}

func (h *Handler) tagDetails(r *http.Request, tag, filter string, limit int) (any, error) {
	re, err := anchoredFilter(filter)
	if err != nil {
		return nil, err
	}
	names, tags, err := h.allTagged(r)
	if err != nil {
		return nil, err
	}
	counts := tagCounts(names, tags)
	vals, ok := counts[tag]
	if !ok {
		return nil, nil // graphite-web answers null
	}
	allTags := make([]string, 0, len(counts))
	for k := range counts {
		allTags = append(allTags, k)
	}
	sort.Strings(allTags)
	vs := make([]string, 0, len(vals))
	for v := range vals {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	values := []any{}
	for i, v := range vs {
		if re != nil && !re.MatchString(v) {
			continue
		}
		if limit > 0 && len(values) >= limit {
			break
		}
		values = append(values, obj{{"id", i + 1}, {"value", v}, {"count", vals[v]}})
	}
	return obj{{"id", sort.SearchStrings(allTags, tag) + 1}, {"tag", tag}, {"values", values}}, nil
}

func (h *Handler) autoCompleteTags(r *http.Request, exprs []string, prefix string, limit int) (any, error) {
	var names []string
	var err error
	searched := map[string]bool{}
	if tl, ok := h.src.(TagLister); ok && len(exprs) == 0 {
		all, err := tl.TagNames(r.Context())
		if err != nil {
			return nil, err
		}
		var out []string
		for _, k := range all {
			if strings.HasPrefix(k, prefix) {
				out = append(out, k)
			}
		}
		return limited(out, limit), nil
	}
	if len(exprs) == 0 {
		names, _, err = h.allTagged(r)
	} else {
		for _, e := range exprs {
			if t, perr := ParseTagTerm(e); perr == nil {
				searched[t.Tag] = true
			}
		}
		names, err = h.findTagged(r, exprs)
	}
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, n := range names {
		t, perr := ParseTaggedName(n)
		if perr != nil {
			continue
		}
		for _, x := range t {
			if !searched[x.k] && strings.HasPrefix(x.k, prefix) {
				set[x.k] = true
			}
		}
	}
	return limited(sortedKeys(set), limit), nil
}

func (h *Handler) autoCompleteValues(r *http.Request, exprs []string, tag, prefix string, limit int) (any, error) {
	if tl, ok := h.src.(TagLister); ok && len(exprs) == 0 {
		out, err := tl.TagValues(r.Context(), tag, prefix, max(limit, 0))
		if err != nil {
			return nil, err
		}
		return limited(out, limit), nil
	}
	var names []string
	var err error
	if len(exprs) == 0 {
		names, _, err = h.allTagged(r)
	} else {
		names, err = h.findTagged(r, append(append([]string(nil), exprs...), tag+"!="))
	}
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, n := range names {
		t, perr := ParseTaggedName(n)
		if perr != nil {
			continue
		}
		if v, ok := t.get(tag); ok && strings.HasPrefix(v, prefix) {
			set[v] = true
		}
	}
	return limited(sortedKeys(set), limit), nil
}

func limited(s []string, limit int) []string {
	if limit > 0 && len(s) > limit {
		s = s[:limit]
	}
	if s == nil {
		s = []string{}
	}
	return s
}
