package remotewrite

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pgts/pgts/internal/ingest"
)

func TestAppendWriteRequest(t *testing.T) {
	ss := []Series{
		{Labels: []ingest.Tag{{Key: "__name__", Value: "up"}, {Key: "job", Value: "api"}},
			Samples: []Sample{{Value: 1, Time: 1700000000123}, {Value: -2.5, Time: -5}}},
		{Labels: []ingest.Tag{{Key: "__name__", Value: "x"}}, Samples: []Sample{{Value: 3, Time: 7}}},
	}
	want := msg(
		series(label("__name__", "up"), label("job", "api"), sample(1, 1700000000123), sample(-2.5, -5)),
		series(label("__name__", "x"), sample(3, 7)))
	got := AppendWriteRequest([]byte("prefix"), ss)
	if !bytes.Equal(got[:6], []byte("prefix")) || !bytes.Equal(got[6:], want) {
		t.Fatalf("AppendWriteRequest = %x\nwant prefix + %x", got, want)
	}

	d := newDecoder(t, ingest.DefaultLimits())
	pts, st, err := d.DecodeProto(nil, got[6:])
	if err != nil || st.Points != 3 {
		t.Fatalf("DecodeProto = %+v, %v", st, err)
	}
	wantPts := []ingest.Point{
		{Name: "up", Tags: []ingest.Tag{{Key: "job", Value: "api"}}, Value: 1, Time: 1700000000123000},
		{Name: "up", Tags: []ingest.Tag{{Key: "job", Value: "api"}}, Value: -2.5, Time: -5000},
		{Name: "x", Value: 3, Time: 7000},
	}
	if diff := cmp.Diff(wantPts, pts, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestAppendWriteRequestZeros checks that zero fields are left out, as
// proto3 encoders do, and still decode as zeros; -0 is not zero.
func TestAppendWriteRequestZeros(t *testing.T) {
	got := AppendWriteRequest(nil, []Series{{
		Labels:  []ingest.Tag{{Key: "__name__", Value: "a"}, {Key: "empty", Value: ""}},
		Samples: []Sample{{}, {Value: math.Copysign(0, -1)}},
	}})
	want := msg(series(label("__name__", "a"), bytesField(1, bytesField(1, []byte("empty"))), bytesField(2, nil),
		bytesField(2, []byte{0x09, 0, 0, 0, 0, 0, 0, 0, 0x80})))
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendWriteRequest = %x, want %x", got, want)
	}
	d := newDecoder(t, ingest.DefaultLimits())
	pts, _, err := d.DecodeProto(nil, got)
	if err != nil || len(pts) != 2 || pts[0].Value != 0 || pts[0].Time != 0 || !math.Signbit(pts[1].Value) {
		t.Fatalf("DecodeProto = %+v, %v", pts, err)
	}
	if got := AppendWriteRequest(nil, nil); len(got) != 0 {
		t.Errorf("no series: %x", got)
	}
}
