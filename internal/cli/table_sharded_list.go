package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pgts/pgts/internal/shard"
)

// shardedJSON describes a sharded table in `table list` and `table show`:
// its partitions live on the shards, so sizes and rows are theirs
// (pgts table show NAME_pN on a shard).
type shardedJSON struct {
	ShardBy    string           `json:"shard_by"`
	Partitions int              `json:"partitions"`
	Placement  map[string][]int `json:"placement"` // shard → its partitions
	State      string           `json:"state"`     // ready, being created, being dropped
}

// describeSharded is the listing of a sharded table t.
func describeSharded(t *shard.Table) tableJSON {
	j := tableJSON{Table: t.String(), TimeColumn: t.Spec.TimeColumn, Interval: t.Spec.Interval.Human(), Premake: t.Spec.Premake}
	if t.Spec.Retention != nil {
		j.Retention = t.Spec.Retention.Human()
	}
	s := &shardedJSON{ShardBy: t.ShardColumn, Partitions: t.Partitions, Placement: map[string][]int{}, State: "ready"}
	switch {
	case t.Dropping:
		s.State = "being dropped"
	case !t.Ready:
		s.State = "being created"
	}
	for p, sh := range t.Placement {
		if sh != "" {
			s.Placement[sh] = append(s.Placement[sh], p)
		}
	}
	j.Sharded = s
	return j
}

// placementText spells a placement as "a 0-3, b 4-7" (partitions per
// shard, in shard order).
func placementText(pl map[string][]int) string {
	names := make([]string, 0, len(pl))
	for n := range pl {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", n, ranges(pl[n]))
	}
	return b.String()
}

// ranges spells sorted partition numbers as "0-3,8".
func ranges(ps []int) string {
	var parts []string
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ps[i], ps[j]))
		} else {
			parts = append(parts, fmt.Sprint(ps[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// writeShardedList prints the sharded tables of out, if any, as a table
// of their own.
func writeShardedList(w io.Writer, out []tableJSON) error {
	found := false
	for _, t := range out {
		found = found || t.Sharded != nil
	}
	if !found {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SHARDED TABLE\tSHARD KEY\tTIME COLUMN\tINTERVAL\tRETENTION\tPARTITIONS\tSTATE")
	for _, t := range out {
		if s := t.Sharded; s != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Table, s.ShardBy, t.TimeColumn, t.Interval, orDash(t.Retention),
				placementText(s.Placement), s.State)
		}
	}
	return tw.Flush()
}

// writeShardedShow prints one sharded table for `table show`.
func writeShardedShow(w io.Writer, j tableJSON) {
	s := j.Sharded
	fmt.Fprintf(w, "table:        %s (sharded)\n", j.Table)
	fmt.Fprintf(w, "shard key:    %s, %d hash partitions\n", s.ShardBy, s.Partitions)
	fmt.Fprintf(w, "placement:    %s\n", placementText(s.Placement))
	fmt.Fprintf(w, "state:        %s\n", s.State)
	fmt.Fprintf(w, "time column:  %s\n", j.TimeColumn)
	fmt.Fprintf(w, "interval:     %s\n", j.Interval)
	fmt.Fprintf(w, "premake:      %d\n", j.Premake)
	fmt.Fprintf(w, "retention:    %s\n", orDash(j.Retention))
	name := j.Table[strings.LastIndexByte(j.Table, '.')+1:]
	fmt.Fprintf(w, "partitions:   series tables %s to %s on their shards (rows and sizes: pgts table show there)\n",
		shard.PartitionName(name, 0), shard.PartitionName(name, s.Partitions-1))
}
