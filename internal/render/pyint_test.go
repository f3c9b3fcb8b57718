package render

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPythonIntValues checks that values graphite-web computes as Python
// ints print as it prints them (3, not 3.0) in every format, per value,
// and that floats stay floats.
func TestPythonIntValues(t *testing.T) {
	h := testHandler(t, testSource())
	// dp spells JSON datapoints from t0 on, 60 s apart.
	dp := func(vals ...string) string {
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprintf("[%s, %d]", v, t0+60*int64(i))
		}
		return `"datapoints": [` + strings.Join(parts, ", ") + "]"
	}
	cases := []struct {
		target string
		format string
		mdp    string // maxDataPoints, "" for none
		want   string
	}{
		{"isNonNull(servers.web2.cpu)", "", "", dp("1", "0", "1", "1", "1", "0", "0", "0", "1", "1")},
		{"changed(servers.web2.cpu)", "", "", dp("0", "0", "1", "1", "1", "0", "0", "0", "1", "1")},
		{"countSeries(servers.web*.cpu)", "", "", dp("2", "2", "2", "2", "2", "2", "2", "2", "2", "2")},
		{"transformNull(servers.web2.cpu)", "", "", dp("110.0", "0", "130.0", "-140.0", "150.0", "0", "0", "0", "190.0", "200.0")},
		// a given default is a float parameter: float(-1)
		{"transformNull(servers.web2.cpu, -1)", "", "", dp("110.0", "-1.0", "130.0", "-140.0", "150.0", "-1.0", "-1.0", "-1.0", "190.0", "200.0")},
		{"transformNull(servers.web2.cpu, 1.5)", "", "", dp("110.0", "1.5", "130.0", "-140.0", "150.0", "1.5", "1.5", "1.5", "190.0", "200.0")},
		{"transformNull(isNonNull(servers.web2.cpu))", "", "", dp("1", "0", "1", "1", "1", "0", "0", "0", "1", "1")},
		{"alias(isNonNull(servers.web2.cpu), \"x\")", "", "", dp("1", "0", "1", "1", "1", "0", "0", "0", "1", "1")},
		{"scale(isNonNull(servers.web2.cpu), 0.5)", "", "", dp("0.5", "0.0", "0.5", "0.5", "0.5", "0.0", "0.0", "0.0", "0.5", "0.5")},
		{`identity("x")`, "", "", fmt.Sprintf("[[%d, %d], [%d, %d]", t0-1, t0-1, t0+59, t0+59)},
		// constantLine's value is a float parameter; countSeries of
		// nothing is constantLine(0) with the int 0
		{"constantLine(1)", "", "", `"datapoints": [[1.0, `},
		{"countSeries()", "", "", `"datapoints": [[0, `},
		// safeAvg(first window) or 0: the int 0 when the window has no data
		{"exponentialMovingAverage(servers.empty.cpu, 3)", "", "", `"datapoints": [[0, `},
		{"exponentialMovingAverage(servers.db1.cpu, 3)", "", "", `"datapoints": [[5.0, `},
		{`randomWalk("w")`, "", "", fmt.Sprintf(`"datapoints": [[0, %d], [`, t0-1)},
		// maxDataPoints: sum of ints, and the int max, min, first or last
		// value of a group, stay ints; averages are floats
		{"consolidateBy(isNonNull(servers.web2.cpu),'sum')", "", "1", `"datapoints": [[6, `},
		{"consolidateBy(isNonNull(servers.web2.cpu),'max')", "", "4", `"datapoints": [[1, 1700000100], [1, 1700000280], [1, 1700000460]]`},
		{"consolidateBy(transformNull(servers.web2.cpu),'min')", "", "4", `"datapoints": [[-140.0, 1700000100], [0, 1700000280], [0, 1700000460]]`},
		{"isNonNull(servers.web2.cpu)", "", "1", `"datapoints": [[0.6, `},
		// aggregates: sum of ints, the int min or max, count
		{"sumSeries(isNonNull(servers.web*.cpu))", "", "", dp("2", "1", "2", "2", "2", "1", "1", "1", "2", "2")},
		{"minSeries(transformNull(servers.web2.cpu), servers.db1.cpu)", "", "", dp("5.0", "0", "5.0", "-140.0", "5.0", "0", "0", "0", "5.0", "5.0")},
		{"aggregate(servers.web*.cpu, 'count')", "", "", dp("2", "1", "2", "2", "2", "1", "1", "1", "2", "2")},
		{"countSeries(servers.web*.cpu)", "raw", "", "|2,2,2,2,2,2,2,2,2,2\n"},
		{"transformNull(servers.web2.cpu)", "raw", "", "|110.0,0,130.0,-140.0,150.0,0,0,0,190.0,200.0\n"},
		{"isNonNull(servers.web2.cpu)", "csv", "", ",0\r\n"},
		{"servers.web2.cpu", "", "", dp("110.0", "null", "130.0", "-140.0", "150.0", "null", "null", "null", "190.0", "200.0")},
	}
	for _, c := range cases {
		t.Run(c.format+"/"+c.target, func(t *testing.T) {
			q := url.Values{"target": {c.target}, "from": {"-10min"}}
			if c.format != "" {
				q.Set("format", c.format)
			}
			if c.mdp != "" {
				q.Set("maxDataPoints", c.mdp)
			}
			code, body := get(t, h, "/render", q)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			if !strings.Contains(body, c.want) {
				t.Errorf("got  %s\nwant it to hold %s", body, c.want)
			}
		})
	}
}
