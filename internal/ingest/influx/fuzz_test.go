package influx

import (
	"bytes"
	"errors"
	"testing"

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

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"cpu,host=a usage=0.5,idle=99i,big=18446744073709551615u,up=true,note=\"x\" 1700000000000000000\n",
		"m,z=1,a=2 v=1 0", `m\,x,k\,1=v\ 1 f\=x=1 0`, "# c\n\nm v=1\r\n", "m v=1e400", "m,k=1,k=2 v=1",
		"a s=\"one\ntwo\" 1\nb v=bad\n", "m v=1 -1500", "m v=1 99999999999999999999",
	} {
		f.Add([]byte(s), uint8(0))
	}
	l := ingest.DefaultLimits()
	l.MaxPoints = 64
	l.MaxTags = 4
	d, err := NewDecoder(l, now)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, prec uint8) {
		p := Precision(prec % 4)
		orig := bytes.Clone(body)
		got, st, err := d.Decode(nil, body, p)
		if !bytes.Equal(body, orig) {
			t.Fatal("Decode modified its input")
		}
		if err != nil {
			checkKind(t, err)
			if len(got) != 0 {
				t.Fatal("Decode returned points with an error")
			}
			return
		}
		if st.Points != len(got) || st.Ignored < 0 || (st.Rejected > 0) != (st.FirstErr != nil) {
			t.Fatalf("stats %+v for %d points", st, len(got))
		}
		if st.FirstErr != nil {
			checkKind(t, st.FirstErr)
			var le *ingest.LineError
			if !errors.As(st.FirstErr, &le) || le.Line < 0 || le.Line > bytes.Count(body, []byte{'\n'})+1 {
				t.Fatalf("first error %v: bad line number", st.FirstErr)
			}
		}
		for _, pt := range got {
			if err := ingest.ValidPoint(pt, l); err != nil {
				t.Fatalf("invalid point %+v: %v", pt, err)
			}
		}
	})
}
