package copyload

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// rawRecordInput spells its rows the ways people write CSV: quoted
// numbers, spaces, exponents, both timestamp forms, CRLF, a quoted field
// over two lines. wantRaw is what the rejects file must hold for each
// refused line: the record exactly as written.
const rawRecordInput = "1,\"1.50\",2026-11-01 00:00:00+00,\"a,b\"\n" + // 1 duplicate key (server)
	"3, 2.0,2026-11-01T00:00:00Z,plain\n" + // 2 loads
	"4,1e3,2026-11-01 00:00:00+00,x\n" + // 3 check constraint (server)
	"5,2.5,2026-11-01 00:00:00+00,\"multi\nline\"\n" + // 4-5 loads
	"2,7,2026-11-01 00:00:00+00,\"dup \"\"q\"\"\"\r\n" + // 6 duplicate key (server), CRLF
	"6,abc,2026-11-01 00:00:00+00,y\n" + // 7 not a float (client)
	"7,1,2,3,4\n" + // 8 field count (client)
	"9,1,x\ry,z\n" + // 9 a carriage return in an unquoted field (reader)
	"8,0.5,2026-11-01 00:00:00+00,\"long\r\nquoted\"\n" // 10-11 loads

var wantRaw = map[int64]string{
	1: "1,\"1.50\",2026-11-01 00:00:00+00,\"a,b\"",
	3: "4,1e3,2026-11-01 00:00:00+00,x",
	6: "2,7,2026-11-01 00:00:00+00,\"dup \"\"q\"\"\"",
	7: "6,abc,2026-11-01 00:00:00+00,y",
	8: "7,1,2,3,4",
	9: "9,1,x\ry,z",
}

// TestRejectsHoldRecordAsWritten: every reject of a file (refused by the
// server, by the client's checks, or by the reader) holds its record as
// it is in the file, byte for byte, with one parser or several, with or
// without a byte-order mark, marked "input"; stdin, which cannot be read
// again, holds the fields re-serialised as CSV, marked "csv".
func TestRejectsHoldRecordAsWritten(t *testing.T) {
	for _, c := range []struct {
		name    string
		bom     bool
		parsers int
		stdin   bool
		text    bool // COPY text rather than binary
	}{
		{"one parser", false, 1, false, false},
		{"three parsers", false, 3, false, false},
		{"byte-order mark", true, 3, false, false},
		{"COPY text", false, 3, false, true},
		{"stdin", false, 1, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			pool := pgtest.Pool(t)
			m := partition.NewManager(pool, nil, nil)
			if _, err := pool.Exec(ctx, `CREATE TABLE r (id int PRIMARY KEY, v float8 CHECK (v < 1000), t timestamptz, s text);
				INSERT INTO r VALUES (1, 0, now(), ''), (2, 0, now(), '')`); err != nil {
				t.Fatal(err)
			}
			input := rawRecordInput
			if c.bom {
				input = "\xef\xbb\xbf" + input
			}
			path := filepath.Join(t.TempDir(), "in.csv")
			if err := os.WriteFile(path, []byte(input), 0o600); err != nil {
				t.Fatal(err)
			}
			in := openInput(t, path, c.stdin, records.DefaultOptions(records.CSV))
			if !c.stdin && in.Raw == nil {
				t.Fatal("a regular uncompressed file has no ReaderAt")
			}
			target, err := LookupTarget(ctx, pool, m, "r")
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			cfg := testConfig(2)
			cfg.Rejects = NewCSVRejects(&out)
			cfg.Text = c.text
			l, err := New(pool, m, target, cfg)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := l.Run(ctx, &FileSource{Inputs: []Input{in}, Columns: []int{0, 1, 2, 3}, Parsers: c.parsers, ChunkBytes: 40})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Loaded != 3 || sum.Rejected != int64(len(wantRaw)) {
				t.Fatalf("loaded %d, rejected %d; want 3 and %d\n%s", sum.Loaded, sum.Rejected, len(wantRaw), out.String())
			}
			recs, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if h := strings.Join(recs[0], ","); h != "source,line,column,reason,record,record_form" {
				t.Fatalf("header %q", h)
			}
			got, form := map[int64]string{}, map[int64]string{}
			for _, r := range recs[1:] {
				var line int64
				fmt.Sscan(r[1], &line)
				got[line], form[line] = r[4], r[5]
			}
			for line, want := range wantRaw {
				wantForm := FormInput
				if c.stdin {
					// the reader's refusals have no fields to spell
					wantForm = map[bool]string{true: FormCSV, false: ""}[line != 9]
					// re-serialised: the fields, not their spelling
					want = map[int64]string{
						1: "1,1.5,2026-11-01 00:00:00+00,\"a,b\"", 3: "4,1000,2026-11-01 00:00:00Z,x",
						6: "2,7,2026-11-01 00:00:00+00,\"dup \"\"q\"\"\"", 7: "6,abc,2026-11-01 00:00:00+00,y",
						8: "7,1,2,3,4", 9: "",
					}[line]
				}
				g := got[line]
				if c.stdin {
					// a duplicate's record is the server's text of the row,
					// another refused row's is decoded by the client: the
					// two spell UTC differently
					g = strings.ReplaceAll(g, "00:00:00Z", "00:00:00+00")
					want = strings.ReplaceAll(want, "00:00:00Z", "00:00:00+00")
				}
				if g != want || form[line] != wantForm {
					t.Errorf("line %d: record %q (%s), want %q (%s)", line, got[line], form[line], want, wantForm)
				}
			}
		})
	}
}

// TestDuplicateRejectsAsWritten: a reload into a table with a primary key
// rejects every row, each with its own line as written, whether the
// batch's rows come from one file (read back at once) or from two.
func TestDuplicateRejectsAsWritten(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, nil)
	if _, err := pool.Exec(ctx, `CREATE TABLE d (id int PRIMARY KEY, v float8);
		INSERT INTO d SELECT g, 0 FROM generate_series(1, 400) g`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	want := map[string]string{} // source:line → record
	var paths []string
	for f, spell := range []string{"%d,\"%d.50\"\n", "%d, %de0\r\n"} {
		var b strings.Builder
		for i := 1; i <= 200; i++ {
			id := f*200 + i
			line := fmt.Sprintf(spell, id, id)
			b.WriteString(line)
			want[fmt.Sprintf("%d:%d", f, i)] = strings.TrimRight(line, "\r\n")
		}
		path := filepath.Join(dir, fmt.Sprintf("in%d.csv", f))
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	target, err := LookupTarget(ctx, pool, m, "d")
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int{150, 1000} { // batches of one file; a batch of both
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			var inputs []Input
			for f, path := range paths {
				in := openInput(t, path, false, records.DefaultOptions(records.CSV))
				in.Name = fmt.Sprint(f)
				inputs = append(inputs, in)
			}
			var out strings.Builder
			cfg := testConfig(2)
			cfg.Rejects = NewCSVRejects(&out)
			cfg.BatchRows = rows
			l, err := New(pool, m, target, cfg)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := l.Run(ctx, &FileSource{Inputs: inputs, Columns: []int{0, 1}, Parsers: 1})
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if sum.Rejected != 400 || len(recs) != 401 {
				t.Fatalf("rejected %d, %d rejects", sum.Rejected, len(recs)-1)
			}
			for _, r := range recs[1:] {
				if w := want[r[0]+":"+r[1]]; r[4] != w || r[5] != FormInput {
					t.Errorf("%s line %s: record %q (%s), want %q", r[0], r[1], r[4], r[5], w)
				}
			}
		})
	}
}

// openInput opens the file at path as an Input, as pgts load opens a
// file, or as it opens stdin when stdin is set (the file then cannot be
// read again). The file is closed at the end of the test.
func openInput(t *testing.T, path string, stdin bool, opts records.Options) Input {
	t.Helper()
	var rc io.ReadCloser
	var info records.Source
	var err error
	if stdin {
		f, ferr := os.Open(path)
		if ferr != nil {
			t.Fatal(ferr)
		}
		t.Cleanup(func() { f.Close() })
		rc, info, err = records.OpenStream(f, "stdin")
	} else {
		rc, info, err = records.Open(path)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	rd, err := records.NewReader(rc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Name: info.Name, Reader: rd, Raw: info.ReaderAt()}
}
