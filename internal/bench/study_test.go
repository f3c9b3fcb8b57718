package bench

import (
	"strings"
	"testing"
	"time"
)

// TestStudyParts checks that every study's parts validate at every size
// and that the full size is the seed's parameters.
func TestStudyParts(t *testing.T) {
	for _, st := range Studies {
		for _, size := range StudySizes {
			parts, err := st.Parts(StudyOptions{Size: size, Workers: 2})
			if err != nil || len(parts) == 0 {
				t.Errorf("%s %s: %v, %d parts", st.Name, size, err, len(parts))
			}
		}
	}
	full := func(name string) []StudyPart {
		st, ok := StudyByName(name)
		if !ok {
			t.Fatalf("no study %q", name)
		}
		p, err := st.Parts(StudyOptions{Size: "full", Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	l := full("loading")[0].Load
	if l.Batches != 1000 || l.Repeat != 3 || strings.Join(l.Stores, ",") != "plain,weekly,monthly,timescaledb,pgts" ||
		len(l.Workers) != 2 || l.Workers[1] != 2 {
		t.Errorf("loading: %+v", l)
	}
	m := full("memory")
	if len(m) != 2 || m[0].MemoryLimit != "128MB" || m[0].Load.Devices != 100_000 || m[1].Load.Devices != 1000 ||
		m[0].Load.Index != "device,time" || m[0].Load.Interval != time.Hour || len(m[0].Load.TimescaleChunks) != 2 ||
		m[0].Load.TimescaleChunks[1] != time.Hour {
		t.Errorf("memory: %+v %+v", m[0], m[0].Load)
	}
	in := full("insert")
	var order []string
	for _, p := range in {
		order = append(order, p.Name)
	}
	if strings.Join(order, ",") != "insert-plain-1,insert-pgts-1,insert-pgts-2,insert-plain-2" || in[0].Insert.TableKind != "plain" ||
		in[1].Insert.TableKind != "pgts" || in[0].Insert.RowsLoad != 500_000 || in[1].Insert.QueryTime != 20*time.Second {
		t.Errorf("insert: %v %+v", order, in[0].Insert)
	}
	ev := full("events")
	if len(ev) != 2 || ev[0].Name != "events-1" || strings.Join(ev[1].Events.Stores, ",") != "pgts,plain" {
		t.Errorf("events: %+v", ev)
	}
	e := ev[0]
	if e.MemoryLimit != "192MB" || e.Events.Sessions != 16 || e.Events.Rows != 500_000 || e.Events.CheckpointTimeout != 5*time.Minute {
		t.Errorf("events: %+v %+v", e, e.Events)
	}
	st, _ := StudyByName("loading")
	if _, err := st.Parts(StudyOptions{Size: "huge", Workers: 2}); err == nil {
		t.Error("size huge accepted")
	}
	if p, err := st.Parts(StudyOptions{Size: "tiny", Workers: 1, Repeat: 5}); err != nil || p[0].Load.Repeat != 5 || len(p[0].Load.Workers) != 1 {
		t.Errorf("one worker, 5 repeats: %+v, %v", p, err)
	}
}
