package partition

import (
	"context"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestLikeNoDuplicateIndex: --like copies the source's indexes; pgts must
// not add a second index on the time column (or a second copy of an
// --index-on list) next to them.
func TestLikeNoDuplicateIndex(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	if _, err := m.Create(ctx, spec("src")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE INDEX ON src (device, time)`,
		`CREATE TABLE plainsrc (time timestamptz not null, device int, value float8)`, `CREATE INDEX ON plainsrc (time)`} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, like := range []string{"src", "plainsrc"} {
		s := spec("copy_of_" + like)
		s.Columns, s.Like = "", like
		s.ExtraIndexes = []string{"device, time"}
		if _, err := m.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		var defs []string
		rows, err := pool.Query(ctx, `SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = $1::regclass ORDER BY 1`, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				t.Fatal(err)
			}
			defs = append(defs, d)
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		if len(defs) != 2 {
			t.Errorf("--like %s: %d indexes, want 2 (time; device, time):\n%v", like, len(defs), defs)
		}
	}
}
