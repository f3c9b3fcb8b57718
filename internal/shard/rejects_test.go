package shard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/records"
)

type memRejects struct {
	mu sync.Mutex
	rs []copyload.Reject
}

func (m *memRejects) Reject(r copyload.Reject) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rs = append(m.rs, r)
	return nil
}

// TestLoadRejects: a CSV input's bad rows are rejected with their line,
// column and reason, whether the splitter refuses them (a shard key the
// column's type refuses, an unparsable record) or a partition's loader
// does (a bad value, a NULL time); the good rows load; the counts add up.
func TestLoadRejects(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 2)
	shardedConditions(t, cl, "cond", 4)
	now := time.Now().UTC().Add(-time.Hour).Format("2006-01-02 15:04:05")
	lines := []string{
		now + ",1,1.5,2.5",     // 1 good
		now + ",abc,1.5,2.5",   // 2 shard key not an integer
		now + ",2,oops,2.5",    // 3 bad float
		",3,1,1",               // 4 NULL time
		now + ",4,1,1,extra",   // 5 field count
		now + `,5,"unclosed,1`, // 6 unterminated quote: a record error at the end
	}
	rd, err := records.NewReader(strings.NewReader(strings.Join(lines, "\n")+"\n"), records.DefaultOptions(records.CSV))
	if err != nil {
		t.Fatal(err)
	}
	rj := &memRejects{}
	cfg := baseLoadConfig()
	cfg.Rejects = rj
	sum, err := cl.c.Load(ctx, "cond", []Input{{Name: "in.csv", Reader: rd}}, LoadConfig{Load: cfg, Columns: genNames, Logger: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Loaded != 1 || sum.Read != sum.Loaded+sum.Rejected+sum.Skipped+sum.NotLoaded || sum.Rejected != int64(len(rj.rs)) {
		t.Fatalf("summary %+v, %d rejects", sum, len(rj.rs))
	}
	got := map[int64]copyload.Reject{}
	for _, r := range rj.rs {
		got[r.Line] = r
	}
	for line, want := range map[int64]string{2: "device", 3: "data1", 4: "time", 5: ""} {
		r, ok := got[line]
		if !ok {
			t.Errorf("line %d not rejected; rejects: %+v", line, rj.rs)
			continue
		}
		if r.Column != want || r.Reason == "" || r.Source != "in.csv" {
			t.Errorf("line %d: %+v, want column %q with a reason", line, r, want)
		}
	}
	if r := got[2]; !strings.Contains(r.Reason, "integer") {
		t.Errorf("line 2's reason %q does not name the type", r.Reason)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM cond`); n != 1 {
		t.Fatalf("%d rows stored", n)
	}
}

// TestMaxRejectsTotal: --max-rejects bounds the rejects of the whole
// sharded load, as for an unsharded load, not each partition's: 8 bad
// rows spread over 4 partitions (none with more than 3) exceed a limit of
// 5, and a limit of 8 lets the load through; the rows refused before
// routing (a bad shard key) count in the same total.
func TestMaxRejectsTotal(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 2)
	shardedConditions(t, cl, "cond", 4)
	now := time.Now().UTC().Add(-time.Hour).Format("2006-01-02 15:04:05")
	var lines []string
	for d := 1; d <= 40; d++ {
		v := "1.5"
		if d <= 8 {
			v = "oops" // refused by the partition's loader
		}
		lines = append(lines, fmt.Sprintf("%s,%d,%s,2.5", now, d, v))
	}
	input := strings.Join(lines, "\n") + "\n"
	load := func(max int64, extra string) (LoadSummary, error) {
		rd, err := records.NewReader(strings.NewReader(input+extra), records.DefaultOptions(records.CSV))
		if err != nil {
			t.Fatal(err)
		}
		cfg := baseLoadConfig()
		cfg.MaxRejects = max
		return cl.c.Load(ctx, "cond", []Input{{Name: "in.csv", Reader: rd}}, LoadConfig{Load: cfg, Columns: genNames, Logger: testLog(t)})
	}
	perPartition := map[int64]int{}
	for d := int64(1); d <= 8; d++ {
		perPartition[scalar(t, cl.coord, `SELECT p FROM generate_series(0, 3) p WHERE satisfies_hash_partition('cond'::regclass, 4, p::int, $1::int)`, d)]++
	}
	for p, n := range perPartition {
		if n > 5 {
			t.Fatalf("partition %d gets %d bad rows: the test needs them spread", p, n)
		}
	}
	if sum, err := load(5, ""); !errors.Is(err, copyload.ErrTooManyRejects) {
		t.Fatalf("8 rejects with --max-rejects 5: %+v, %v", sum, err)
	} else {
		t.Logf("with --max-rejects 5: %v", err)
	}
	if sum, err := load(8, now+",x,1,1\n"); !errors.Is(err, copyload.ErrTooManyRejects) {
		t.Fatalf("9 rejects (one a bad key) with --max-rejects 8: %+v, %v", sum, err)
	}
	sum, err := load(8, "")
	if err != nil || sum.Rejected != 8 || sum.Loaded != 32 {
		t.Fatalf("8 rejects with --max-rejects 8: %+v, %v", sum, err)
	}
}

// TestLoadRejectsAsWritten: a sharded load of a regular file rejects each
// refused record as it is in the file, byte for byte (record form
// "input"), whoever refuses it: the splitter (a shard key the column's
// type refuses, a record the reader refuses), a partition's loader (a bad
// value) or a shard's server (a CHECK constraint).
func TestLoadRejectsAsWritten(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 2)
	shardedConditions(t, cl, "cond", 4)
	for _, sp := range cl.shards {
		// the parents of each shard: their partitions, made or to be
		// made, take the constraint
		if _, err := sp.Exec(ctx, `DO $$ DECLARE r record; BEGIN
			FOR r IN SELECT c.oid::regclass AS t FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
				WHERE a.attname = 'data1' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
				AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace) LOOP
				EXECUTE format('ALTER TABLE %s ADD CHECK (data1 < 1000)', r.t);
			END LOOP; END $$`); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Now().UTC().Add(-time.Hour)
	sp, iso := at.Format("2006-01-02 15:04:05+00"), at.Format("2006-01-02T15:04:05Z")
	lines := []string{
		sp + `,1,"1.50", 2.5`,     // 1 loads
		iso + `, abc ,1.5,2.5`,    // 2 shard key not an integer (splitter)
		`"` + sp + `",2,oops,2.5`, // 3 bad float (partition loader)
		iso + ",3,1e3,1",          // 4 CHECK (shard's server)
		sp + ",4,1,1,extra",       // 5 field count (partition loader)
		iso + ",5,\"a\r\nb\",1",   // 6-7 bad float over two lines
		sp + ",6,x\ry,1",          // 8 a carriage return in an unquoted field (reader)
		iso + `,7,0.5,"2.0"`,      // 9 loads
	}
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\r\n")+"\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, info, err := records.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rd, err := records.NewReader(rc, records.DefaultOptions(records.CSV))
	if err != nil {
		t.Fatal(err)
	}
	rj := &memRejects{}
	cfg := baseLoadConfig()
	cfg.Rejects = rj
	in := Input{Name: info.Name, Reader: rd, Raw: info.ReaderAt()}
	sum, err := cl.c.Load(ctx, "cond", []Input{in}, LoadConfig{Load: cfg, Columns: genNames, Logger: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{2: lines[1], 3: lines[2], 4: lines[3], 5: lines[4], 6: lines[5], 8: lines[6]}
	if sum.Loaded != 2 || sum.Rejected != int64(len(want)) || len(rj.rs) != len(want) {
		t.Fatalf("summary %+v, rejects %+v", sum, rj.rs)
	}
	for _, r := range rj.rs {
		if r.Record != want[r.Line] || r.RecordForm != copyload.FormInput || r.Reason == "" {
			t.Errorf("line %d: record %q (%s, %s), want %q as written", r.Line, r.Record, r.RecordForm, r.Reason, want[r.Line])
		}
	}
}
