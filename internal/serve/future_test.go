package serve

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/remotewrite"
)

// A point dated beyond the clock plus future-tolerance is refused as a
// +Inf value is: the other points are stored, and Influx and remote write
// answer 400 with a partial-write error naming the refused point, not 204.
func TestHTTPFuturePointRefused(t *testing.T) {
	ts := startServer(t, nil, nil)
	now := testNow.Unix()
	future := now + 3600 // the default tolerance is 10 minutes
	code, body := post(t, ts, "/write?precision=s", []byte(fmt.Sprintf("ok v=1 %d\nlate v=2 %d\n", now, future)), nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "partial write") || !strings.Contains(body, "late.v") {
		t.Errorf("influx with a point an hour ahead: %d %s, want 400 naming late.v", code, body)
	}
	if got := ts.sink.byName("late.v"); len(got) != 0 {
		t.Errorf("future point handed to storage: %+v", got)
	}
	if got := ts.sink.byName("ok.v"); len(got) != 1 {
		t.Errorf("good point of the body: %+v", got)
	}
	rw := remoteWriteBody([]remotewrite.Series{
		{Labels: []ingest.Tag{{Key: "__name__", Value: "up"}}, Samples: []remotewrite.Sample{{Value: 1, Time: now * 1000}}},
		{Labels: []ingest.Tag{{Key: "__name__", Value: "ahead"}}, Samples: []remotewrite.Sample{{Value: 1, Time: future * 1000}}},
	})
	code, body = post(t, ts, "/api/v1/write", rw, map[string]string{"Content-Encoding": "snappy"})
	if code != http.StatusBadRequest || !strings.Contains(body, "ahead") {
		t.Errorf("remote write with a sample an hour ahead: %d %s, want 400 naming ahead", code, body)
	}
	if got := ts.sink.byName("up"); len(got) != 1 {
		t.Errorf("good sample of the body: %+v", got)
	}
	if got := ts.metric("parse_errors_total", map[string]string{"protocol": protoInflux, "kind": "timestamp"}); got != 1 {
		t.Errorf("influx timestamp refusals: %v, want 1", got)
	}
}
