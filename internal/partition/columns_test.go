package partition

import (
	"context"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestColumnList(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"time timestamptz not null, device int, v float8", `"time" timestamptz not null, "device" int, "v" float8`},
		{`Time timestamptz, "My Col" numeric(10, 2) default 0, note text default 'a, b (c'`,
			`"time" timestamptz, "My Col" numeric(10, 2) default 0, "note" text default 'a, b (c'`},
		{"time timestamptz, device int, primary key (device, time)", `"time" timestamptz, "device" int, primary key (device, time)`},
		{"time timestamptz, v int check (v > 0)", `"time" timestamptz, "v" int check (v > 0)`},
	} {
		got, err := ColumnList(c.in)
		if err != nil || got != c.want {
			t.Errorf("ColumnList(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		"time timestamptz not null, v int) partition by list (v) --",
		"time timestamptz, v int -- comment",
		"time timestamptz, v int /* x */",
		"time timestamptz); drop table x; --",
		"time timestamptz, v int; select 1",
		"time timestamptz, v numeric(10, 2",
		"time timestamptz, v text default 'open",
		`time timestamptz, "v int`,
		"time timestamptz,, v int",
		"time timestamptz, v",
		"",
		"time timestamptz, like other",
		"time timestamptz, v text default E'\\'' ) --'",
		"time timestamptz, v text default $$x$$",
	} {
		if got, err := ColumnList(in); err == nil {
			t.Errorf("ColumnList(%q) = %q, want an error", in, got)
		}
	}
}

// TestCreateRefusesSplicedColumns is the reported attack: a column list
// that closes the parenthesis and comments out PARTITION BY RANGE.
func TestCreateRefusesSplicedColumns(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	s := spec("spliced")
	s.Columns = "time timestamptz not null, v int) partition by list (v) --"
	if _, err := m.Create(ctx, s); err == nil || !strings.Contains(err.Error(), "--columns") {
		t.Fatalf("Create = %v, want a --columns error", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = 'spliced'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d tables named spliced (%v)", n, err)
	}
}

func FuzzColumnList(f *testing.F) {
	for _, s := range []string{"time timestamptz not null, device int", `"a""b" text default 'x''y'`, "v numeric(1,2)", "a int) --"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ColumnList(in)
		if err != nil {
			return
		}
		// Whatever is accepted parses again to itself (it is already
		// normalised) and cannot leave the column list.
		again, err := ColumnList(out)
		if err != nil || again != out {
			t.Fatalf("ColumnList(%q) = %q, which gives %q, %v", in, out, again, err)
		}
		if d := depthAfter(out); d != 0 {
			t.Fatalf("ColumnList(%q) = %q: unbalanced", in, out)
		}
	})
}

// depthAfter returns the parenthesis depth at the end of s outside quotes.
func depthAfter(s string) int {
	d, q := 0, byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '(':
			d++
		case c == ')':
			d--
		}
	}
	return d
}

func BenchmarkColumnList(b *testing.B) {
	in := `time timestamptz not null, device int not null, "Temp" numeric(5, 2) default 0, note text default 'a, b', primary key (device, time)`
	for b.Loop() {
		if _, err := ColumnList(in); err != nil {
			b.Fatal(err)
		}
	}
}
