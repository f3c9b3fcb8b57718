package graphite

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
)

// kinds are the error kinds a parser may return.
var kinds = []error{ingest.ErrSyntax, ingest.ErrName, ingest.ErrTag, ingest.ErrValue,
	ingest.ErrTimestamp, ingest.ErrLimit, ingest.ErrUnsupported}

// checkKind fails unless err wraps exactly one of kinds.
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

func FuzzAppendLine(f *testing.F) {
	for _, s := range []string{
		"a.b.c 1.5 1700000000", "a 1", "a 1 -1", "a 1 -1.5", "cpu;a=1;b=2 3 4",
		"a nan 0", "a 1e400 0", "a 1 1e20", "a\x00b 1 0", "a;k=~v 1 0", "", " \t",
		"a;k=1;k=2 1 0", "a 0x1p-2 0", "héllo 1 0", "a 1 2 3",
	} {
		f.Add([]byte(s))
	}
	l := ingest.DefaultLimits()
	l.MaxLineBytes = 256
	l.MaxTags = 4
	p, err := NewParser(l, now)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		orig := bytes.Clone(line)
		got, err := p.AppendLine(nil, line)
		if !bytes.Equal(line, orig) {
			t.Fatal("AppendLine modified its input")
		}
		if err != nil {
			checkKind(t, err)
			if len(got) != 0 {
				t.Fatalf("AppendLine returned points with an error: %+v", got)
			}
			return
		}
		if len(got) > 1 {
			t.Fatalf("AppendLine appended %d points", len(got))
		}
		for _, pt := range got {
			if err := ingest.ValidPoint(pt, l); err != nil {
				t.Fatalf("AppendLine(%q) = invalid point %+v: %v", line, pt, err)
			}
		}
	})
}

func FuzzPickleDecode(f *testing.F) {
	for _, name := range append(fixtureFiles, "evil_reduce.pickle") {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[FrameHeaderBytes:])
	}
	for _, s := range []string{
		"(l(S'stats.a'\n(L1700000000L\nS'1.5'\ntta.",
		"(l(Vcaf\\u00e9\n(I1700000000\nF1.5\ntta.",
		"\x80\x02]q\x00h\x00a.",
		"\x80\x02](X\x01\x00\x00\x00aJ\x00\xf1\x53\x65\x8a\x02\x00\xff\x86\x86e.",
	} {
		f.Add([]byte(s))
	}
	l := ingest.DefaultLimits()
	l.MaxFrameBytes = 4096
	l.MaxPoints = 64
	d, err := NewPickleDecoder(l, now)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		orig := bytes.Clone(frame)
		got, st, err := d.Decode(nil, frame)
		if !bytes.Equal(frame, orig) {
			t.Fatal("Decode modified its input")
		}
		if err != nil {
			checkKind(t, err)
			if len(got) != 0 || st.Points != 0 {
				t.Fatalf("Decode returned points with an error: %+v", got)
			}
			return
		}
		if st.Points != len(got) || st.Points+st.Rejected > l.MaxPoints {
			t.Fatalf("stats %+v for %d points", st, len(got))
		}
		if (st.Rejected > 0) != (st.FirstErr != nil) {
			t.Fatalf("stats %+v", st)
		}
		if st.FirstErr != nil {
			checkKind(t, st.FirstErr)
		}
		for _, pt := range got {
			if err := ingest.ValidPoint(pt, l); err != nil {
				t.Fatalf("invalid point %+v: %v", pt, err)
			}
		}
	})
}
