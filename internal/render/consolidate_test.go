package render

import (
	"net/http"
	"net/url"
	"testing"
)

// TestConsolidateByMaxDataPoints pins graphite-web's JSON consolidation
// (render/views.py): with maxDataPoints 4 over ten 60 s points,
// valuesPerPoint = ceil(10/4) = 3, the start is nudged by 120 s and
// range(1, 2) drops one value, then each group of three goes through the
// series' consolidationFunc and xFilesFactor (datalib.TimeSeries).
func TestConsolidateByMaxDataPoints(t *testing.T) {
	h := testHandler(t, testSource())
	for _, c := range []struct{ target, want string }{
		{"servers.web1.cpu", `[{"target": "servers.web1.cpu", "tags": {"name": "servers.web1.cpu"}, "datapoints": [[13.0, 1700000100], [16.0, 1700000280], [19.0, 1700000460]]}]`},
		{`consolidateBy(servers.web1.cpu,"max")`, `[{"target": "consolidateBy(servers.web1.cpu,\"max\")", "tags": {"name": "servers.web1.cpu", "consolidateBy": "max"}, "datapoints": [[14.0, 1700000100], [17.0, 1700000280], [20.0, 1700000460]]}]`},
		{`consolidateBy(servers.web1.cpu,"sum")`, `[{"target": "consolidateBy(servers.web1.cpu,\"sum\")", "tags": {"name": "servers.web1.cpu", "consolidateBy": "sum"}, "datapoints": [[39.0, 1700000100], [48.0, 1700000280], [57.0, 1700000460]]}]`},
		{`consolidateBy(servers.web1.cpu,"first")`, `[{"target": "consolidateBy(servers.web1.cpu,\"first\")", "tags": {"name": "servers.web1.cpu", "consolidateBy": "first"}, "datapoints": [[12.0, 1700000100], [15.0, 1700000280], [18.0, 1700000460]]}]`},
		// [null, 130, -140] [150, null, null] [null, 190, 200]
		{"servers.web2.cpu", `[{"target": "servers.web2.cpu", "tags": {"name": "servers.web2.cpu"}, "datapoints": [[-5.0, 1700000100], [150.0, 1700000280], [195.0, 1700000460]]}]`},
		// xFilesFactor 0.5: one value of three is not enough
		{"setXFilesFactor(servers.web2.cpu,0.5)", `[{"target": "servers.web2.cpu", "tags": {"name": "servers.web2.cpu", "xFilesFactor": "0.5"}, "datapoints": [[-5.0, 1700000100], [null, 1700000280], [195.0, 1700000460]]}]`},
		// avg_zero counts the nulls as zeros
		{`consolidateBy(servers.web2.cpu,"avg_zero")`, `[{"target": "consolidateBy(servers.web2.cpu,\"avg_zero\")", "tags": {"name": "servers.web2.cpu", "consolidateBy": "avg_zero"}, "datapoints": [[-3.3333333333333335, 1700000100], [50.0, 1700000280], [130.0, 1700000460]]}]`},
	} {
		code, body := get(t, h, "/render", url.Values{"target": {c.target}, "from": {"-10min"}, "until": {"now"}, "maxDataPoints": {"4"}})
		if code != http.StatusOK || body != c.want {
			t.Errorf("%s: %d %s\nwant %s", c.target, code, body, c.want)
		}
	}
}
