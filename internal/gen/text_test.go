package gen

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/copyenc"
)

func TestWriteTextConditions(t *testing.T) {
	var out bytes.Buffer
	if err := WriteText(context.Background(), &out, mustNew(t, "conditions", Options{Batches: 30})); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) != 300_001 || lines[300_000] != "" {
		t.Fatalf("%d lines, want 300,000 and a final newline", len(lines)-1)
	}
	if lines[0] != "1970-01-01 00:00:00.000000\t1\t0.01\t0.08\t0.15\t0.23\t0.30" {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[299_999], "1970-01-01 00:29:59.000000\t1000\t") {
		t.Errorf("last line %q", lines[299_999])
	}
}

// TestWriteTextTyped checks that iibench and events text is what
// copyenc.TextWriter makes of their fields, row by row, and that each
// line has its columns' count of fields once COPY's escapes are read.
func TestWriteTextTyped(t *testing.T) {
	for _, kind := range []string{"iibench", "events"} {
		o := Options{Seed: 11, Rows: 3000}
		var out bytes.Buffer
		if err := WriteText(context.Background(), &out, mustNew(t, kind, o)); err != nil {
			t.Fatal(err)
		}
		g := mustNew(t, kind, o)
		tw := copyenc.NewTextWriter(0)
		for g.Next() {
			g.Encode(tw)
		}
		if !bytes.Equal(out.Bytes(), tw.Bytes()) {
			t.Fatalf("%s: WriteText differs from TextWriter", kind)
		}
		// Read the lines back as COPY does and compare with the fields.
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 3000 {
			t.Fatalf("%s: %d lines", kind, len(lines))
		}
		g = mustNew(t, kind, o)
		for k := 0; g.Next(); k++ {
			r := newRecorder(t)
			g.Encode(r)
			f := copyFields(lines[k])
			if len(f) != len(r.vals) {
				t.Fatalf("%s line %d: %d fields, want %d: %q", kind, k, len(f), len(r.vals), lines[k])
			}
			last := r.vals[len(r.vals)-1].(string) // data, payload: the fields with escapes
			if f[len(f)-1] != last {
				t.Fatalf("%s line %d: last field reads back as %q, want %q", kind, k, f[len(f)-1], last)
			}
		}
	}
}

// copyFields splits a line of COPY text format into its fields, undoing
// the backslash escapes.
func copyFields(line string) []string {
	var fields []string
	var cur []byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\t':
			fields = append(fields, string(cur))
			cur = cur[:0]
		case c == '\\' && i+1 < len(line):
			i++
			cur = append(cur, map[byte]byte{'t': '\t', 'n': '\n', 'r': '\r', '\\': '\\'}[line[i]])
		default:
			cur = append(cur, c)
		}
	}
	return append(fields, string(cur))
}

type failWriter struct{ n int }

var errWrite = errors.New("disk full")

func (f *failWriter) Write(b []byte) (int, error) {
	f.n++
	return 0, errWrite
}

func TestWriteTextErrors(t *testing.T) {
	for _, kind := range Kinds() {
		fw := &failWriter{}
		if err := WriteText(context.Background(), fw, mustNew(t, kind, Options{Batches: 10, Rows: 200_000})); !errors.Is(err, errWrite) || fw.n != 1 {
			t.Errorf("%s: err %v after %d writes, want %v after 1", kind, err, fw.n, errWrite)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out bytes.Buffer
		if err := WriteText(ctx, &out, mustNew(t, kind, Options{Rows: 200_000})); !errors.Is(err, context.Canceled) || out.Len() != 0 {
			t.Errorf("%s: canceled: err %v, %d bytes written", kind, err, out.Len())
		}
	}
}
