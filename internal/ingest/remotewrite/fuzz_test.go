package remotewrite

import (
	"bytes"
	"errors"
	"testing"

	"github.com/klauspost/compress/snappy"

	"github.com/pgts/pgts/internal/ingest"
)

var kinds = []error{ingest.ErrSyntax, ingest.ErrName, ingest.ErrTag, ingest.ErrValue,
	ingest.ErrTimestamp, ingest.ErrLimit, ingest.ErrUnsupported}

func checkKind(t *testing.T, err error) {
	t.Helper()
	n := 0
	for _, k := range kinds {
		if errors.Is(err, k) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("error %q wraps %d kinds, want 1", err, n)
	}
}

func fuzzSeeds() [][]byte {
	return [][]byte{
		series(label("__name__", "up"), label("job", "api"), sample(1, 1700000000123)),
		msg(series(label("__name__", "a"), sample(1, 1)), series(label("x", "y"), sample(1, 1))),
		series(label("__name__", "h"), bytesField(4, []byte{8, 1}), bytesField(3, []byte("e"))),
		series(label("__name__", "a"), label("k", "1"), label("k", "2"), sample(1, 1)),
		append(series(label("__name__", "a")), 0x80),
		{0x0a, 0x10, 0x01},
	}
}

// checkDecoded checks the invariants of a decoded request.
func checkDecoded(t *testing.T, l ingest.Limits, got []ingest.Point, st ingest.Stats, err error) {
	t.Helper()
	if err != nil {
		checkKind(t, err)
		if len(got) != 0 || st != (ingest.Stats{}) {
			t.Fatal("points or stats with an error")
		}
		return
	}
	if st.Points != len(got) || st.Points > l.MaxPoints || (st.Rejected > 0) != (st.FirstErr != nil) {
		t.Fatalf("stats %+v for %d points", st, len(got))
	}
	if st.FirstErr != nil {
		checkKind(t, st.FirstErr)
	}
	for _, pt := range got {
		if err := ingest.ValidPoint(pt, l); err != nil {
			t.Fatalf("invalid point %+v: %v", pt, err)
		}
	}
}

func fuzzLimits() ingest.Limits {
	l := ingest.DefaultLimits()
	l.MaxPoints = 64
	l.MaxTags = 4
	l.MaxDecodedBytes = 1 << 16
	l.MaxBodyBytes = 1 << 16
	return l
}

func FuzzDecodeProto(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	l := fuzzLimits()
	d, err := NewDecoder(l)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		orig := bytes.Clone(req)
		got, st, err := d.DecodeProto(nil, req)
		if !bytes.Equal(req, orig) {
			t.Fatal("DecodeProto modified its input")
		}
		checkDecoded(t, l, got, st, err)
	})
}

// FuzzDecode fuzzes the compressed path; seeds are valid snappy blocks.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(snappy.Encode(nil, s))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0x0f, 0x00, 'x'})
	l := fuzzLimits()
	d, err := NewDecoder(l)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := bytes.Clone(body)
		got, st, err := d.Decode(nil, body)
		if !bytes.Equal(body, orig) {
			t.Fatal("Decode modified its input")
		}
		checkDecoded(t, l, got, st, err)
	})
}
