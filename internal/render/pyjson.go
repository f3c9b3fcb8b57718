package render

import (
	"fmt"
	"sort"
	"strconv"
)

// obj is a JSON object with ordered keys.
type obj []kv

type kv struct {
	k string
	v any
}

// appendPyJSON encodes v the way Python's json.dumps does with default
// separators (", " and ": "), which is what graphite-web sends. Supported
// values: nil, bool, int, int64, float64, string, []string, []any, obj and
// map[string]any (keys sorted).
func appendPyJSON(b []byte, v any, ensureASCII bool) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return appendPyJSONFloat(b, x)
	case string:
		return appendPyJSONString(b, x, ensureASCII)
	case []string:
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPyJSONString(b, s, ensureASCII)
		}
		return append(b, ']')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPyJSON(b, e, ensureASCII)
		}
		return append(b, ']')
	case obj:
		b = append(b, '{')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPyJSONString(b, e.k, ensureASCII)
			b = append(b, ": "...)
			b = appendPyJSON(b, e.v, ensureASCII)
		}
		return append(b, '}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(obj, len(keys))
		for i, k := range keys {
			o[i] = kv{k, x[k]}
		}
		return appendPyJSON(b, o, ensureASCII)
	}
	panic(fmt.Sprintf("render: cannot encode %T as JSON", v))
}
