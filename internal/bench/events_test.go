package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

func tinyEvents(t *testing.T) EventsScenario {
	s := DefaultEventsScenario()
	s.Sessions, s.Rows, s.WeekRows = 2, 300, 100 // 300 rows over 3 weeks of created_at
	s.ConnString = pgtest.DB(t)
	return s
}

func TestRunEvents(t *testing.T) {
	s := tinyEvents(t)
	var seen []string
	res, err := RunEvents(context.Background(), s, func(r EventsRun) { seen = append(seen, r.Store) })
	if err != nil {
		t.Fatalf("RunEvents: %v", err)
	}
	if !res.Complete || strings.Join(seen, ",") != "plain,pgts" || len(res.Runs) != 2 {
		t.Fatalf("complete %v, runs %v: %s", res.Complete, seen, res.Error)
	}
	for _, r := range res.Runs {
		if !r.Complete || !r.Verified || r.Rows != 300 || r.IPS <= 0 || r.Seconds <= 0 {
			t.Errorf("%s: complete %v verified %v rows %d ips %.0f: %s", r.Store, r.Complete, r.Verified, r.Rows, r.IPS, r.Error)
		}
		if r.Latency == nil || r.Latency.Count != 300 {
			t.Errorf("%s: commit latency %+v, want 300 commits", r.Store, r.Latency)
		}
		var inserts int64
		for _, sm := range r.Samples {
			inserts += sm.Inserts
			if sm.Seconds <= 0 || sm.WALBytes < 0 || sm.WriteBytes < 0 || (sm.Inserts > 0 && sm.MaxUS <= 0) {
				t.Errorf("%s: sample %+v", r.Store, sm)
			}
		}
		if len(r.Samples) == 0 || inserts != r.Rows {
			t.Errorf("%s: %d samples counting %d inserts, want %d", r.Store, len(r.Samples), inserts, r.Rows)
		}
		if r.WALBytes <= 300*1000 || r.TableBytes <= 0 || r.StartIPS <= 0 || r.EndIPS <= 0 {
			t.Errorf("%s: wal %d table %d start %.0f end %.0f", r.Store, r.WALBytes, r.TableBytes, r.StartIPS, r.EndIPS)
		}
		if len(r.Indexes) != 5 {
			t.Fatalf("%s: indexes %+v", r.Store, r.Indexes)
		}
		for _, ix := range r.Indexes {
			if ix.Bytes <= 0 || !strings.Contains(ix.Definition, "events") {
				t.Errorf("%s: index %+v", r.Store, ix)
			}
		}
		if !strings.Contains(r.Indexes[2].Definition, "gin") || !strings.Contains(r.Indexes[2].Definition, "jsonb_path_ops") {
			t.Errorf("%s: GIN index %q", r.Store, r.Indexes[2].Definition)
		}
	}
	plain, pgts := res.Runs[0], res.Runs[1]
	if plain.PrimaryKey != "PRIMARY KEY (id)" || plain.Advice != "" || plain.Partitions != 0 {
		t.Errorf("plain: key %q advice %q partitions %d", plain.PrimaryKey, plain.Advice, plain.Partitions)
	}
	if pgts.PrimaryKey != "PRIMARY KEY (id, created_at)" || !strings.Contains(pgts.Advice, `"created_at"`) {
		t.Errorf("pgts: key %q advice %q", pgts.PrimaryKey, pgts.Advice)
	}
	// 300 rows, 100 a week, ± 2.5 s: 3 or 4 weekly partitions (the
	// first week may start mid-week).
	// A second of work sees no timed checkpoint, and the one each run
	// starts from is not counted.
	for _, r := range res.Runs {
		if r.Checkpoints != 0 {
			t.Errorf("%s: %d checkpoints counted", r.Store, r.Checkpoints)
		}
	}
	if pgts.Partitions < 3 || pgts.Partitions > 5 {
		t.Errorf("pgts: %d partitions", pgts.Partitions)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	runs := back["runs"].([]any)
	if sm, ok := runs[1].(map[string]any)["samples"].([]any); !ok || len(sm) == 0 || sm[0].(map[string]any)["ips"] == nil {
		t.Errorf("JSON lacks the per-second samples: %s", b[:min(len(b), 400)])
	}
}

func TestRunEventsDuration(t *testing.T) {
	s := tinyEvents(t)
	s.Stores, s.Rows, s.Duration = []string{"pgts"}, 0, 1500*time.Millisecond
	s.CheckpointTimeout = 31 * time.Second
	conn := pgtest.Conn(t)
	res, err := RunEvents(context.Background(), s, nil)
	if err != nil {
		t.Fatalf("RunEvents: %v", err)
	}
	if got := res.Machine.Settings["checkpoint_timeout"]; got != "31s" {
		t.Errorf("checkpoint_timeout during the run: %q, want 31s", got)
	}
	var after string
	if err := conn.QueryRow(context.Background(), "SELECT setting FROM pg_file_settings WHERE name = 'checkpoint_timeout' AND sourcefile LIKE '%auto.conf'").Scan(&after); err == nil {
		t.Errorf("postgresql.auto.conf still sets checkpoint_timeout = %s", after)
	}
	r := res.Runs[0]
	if !r.Complete || !r.Verified || r.Rows == 0 || r.Seconds < 1.5 {
		t.Fatalf("complete %v verified %v rows %d seconds %.2f: %s", r.Complete, r.Verified, r.Rows, r.Seconds, r.Error)
	}
	var inserts int64
	for _, sm := range r.Samples {
		inserts += sm.Inserts
	}
	if inserts != r.Rows || len(r.Samples) < 2 {
		t.Errorf("%d samples count %d inserts, %d committed", len(r.Samples), inserts, r.Rows)
	}
}

func TestEventsScenarioValidate(t *testing.T) {
	for name, f := range map[string]func(*EventsScenario){
		"no store":     func(s *EventsScenario) { s.Stores = nil },
		"bad store":    func(s *EventsScenario) { s.Stores = []string{"weekly"} },
		"store twice":  func(s *EventsScenario) { s.Stores = []string{"pgts", "pgts"} },
		"no sessions":  func(s *EventsScenario) { s.Sessions = 0 },
		"rows and dur": func(s *EventsScenario) { s.Duration = time.Minute },
		"neither":      func(s *EventsScenario) { s.Rows = 0 },
		"short dur":    func(s *EventsScenario) { s.Rows, s.Duration = 0, time.Millisecond },
		"tiny doc":     func(s *EventsScenario) { s.DocBytes = 10 },
		"week rows":    func(s *EventsScenario) { s.WeekRows = 0 },
	} {
		s := DefaultEventsScenario()
		f(&s)
		if err := s.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	s := DefaultEventsScenario()
	if err := s.Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
}

func TestStartEnd(t *testing.T) {
	var sm []EventsSample
	for i := range 20 {
		sm = append(sm, EventsSample{Seconds: 1, IPS: float64(100 - i)})
	}
	sm = append(sm, EventsSample{Seconds: 0.1, IPS: 5}) // a partial last second is left out
	s, e := startEnd(sm)
	if s != 99.5 || e != 81.5 {
		t.Errorf("start %g end %g, want 99.5 and 81.5", s, e)
	}
	if s, e := startEnd(nil); s != 0 || e != 0 {
		t.Errorf("no samples: %g %g", s, e)
	}
}
