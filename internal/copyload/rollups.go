package copyload

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// A load into a series table with rollups (package rollup) records what
// each batch wrote itself, in the batch's transaction: one row of
// pgts.rollup_invalidation_range per rollup, batch and partition, with the
// batch's times and, per group-by column, the distinct values it wrote
// (read back from the encoded batch). The transaction sets
// pgts.rollup_recorded to the rollups it records, so that the statement
// trigger on the partition (which records the partition's whole range,
// for writes naming it by anyone else) records nothing, and no trigger
// with transition tables is on the partition: the COPY pays nothing per
// row. Not on the parent route (the parent's own trigger records each
// (bucket, key) precisely), nor with OnConflict update (an overwritten
// row's old key is not in the batch: the partition's trigger records its
// whole range).

// recordedSetting is package rollup's RecordedSetting (an import would
// make a cycle with its tests).
const recordedSetting = "pgts.rollup_recorded"

// rollupHook is what a load knows of the rollups on its table, read when
// it starts. A rollup made during the load is not in it: the partition's
// trigger records the batches for it (the setting names only these).
type rollupHook struct {
	setting string // ",1,2,"
	rollups []hookRollup
	need    []int // indexes in l.cols of every group-by column written
}

type hookRollup struct {
	id   int
	cols []int // per group-by column, its index in l.cols (-1: not written)
}

// rollupSetup reads the rollups on the target (live leaf route only) and
// makes each batch transaction set pgts.rollup_recorded.
func (l *Loader) rollupSetup(ctx context.Context) error {
	l.rollups = nil
	l.txOpts.BeginQuery = l.beginQuery
	if l.target.Series == nil || l.cfg.Route != RouteLeaf || l.cfg.OnConflict == ConflictUpdate {
		return nil
	}
	var present bool
	if err := l.pool.QueryRow(ctx, `SELECT to_regclass('pgts.rollup_invalidation_range') IS NOT NULL`).Scan(&present); err != nil {
		return fmt.Errorf("reading the rollups of %s: %w", l.target, err)
	}
	if !present {
		return nil
	}
	rows, err := l.pool.Query(ctx, `SELECT id, group_by FROM pgts.rollup WHERE source_schema = $1 AND source_name = $2 AND records_ranges ORDER BY id`,
		l.target.Schema, l.target.Name)
	if err != nil {
		return fmt.Errorf("reading the rollups of %s: %w", l.target, err)
	}
	h := &rollupHook{setting: ","}
	var id int
	var groupBy []string
	_, err = pgx.ForEachRow(rows, []any{&id, &groupBy}, func() error {
		hr := hookRollup{id: id, cols: make([]int, len(groupBy))}
		for i, g := range groupBy {
			hr.cols[i] = -1
			for k, c := range l.cols {
				if c.Name == g {
					hr.cols[i] = k
					if !containsInt(h.need, k) {
						h.need = append(h.need, k)
					}
				}
			}
		}
		h.rollups = append(h.rollups, hr)
		h.setting += strconv.Itoa(id) + ","
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the rollups of %s: %w", l.target, err)
	}
	if len(h.rollups) == 0 {
		return nil
	}
	l.rollups = h
	begin := l.beginQuery
	if begin == "" {
		begin = "BEGIN"
	}
	l.txOpts.BeginQuery = begin + "; SET LOCAL " + recordedSetting + " = '" + h.setting + "'"
	return nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// recordRollups writes b's range records, in its transaction tx.
func (l *Loader) recordRollups(ctx context.Context, tx pgx.Tx, b *batch) error {
	h := l.rollups
	if h == nil || b.leaf == "" || b.bulk != nil || b.rows() == 0 || b.thi <= b.tlo {
		return nil
	}
	vals := l.batchValues(b, h.need)
	ids := make([]int32, len(h.rollups))
	recs := make([]*string, len(h.rollups))
	for i, hr := range h.rollups {
		ids[i] = int32(hr.id)
		cols := make([][]*string, len(hr.cols))
		ok := true
		for k, c := range hr.cols {
			v, known := vals[c]
			if c < 0 || !known {
				ok = false // not written, or a type read back as text here is not: any key
				break
			}
			cols[k] = v
		}
		if !ok {
			continue
		}
		j, err := json.Marshal(cols)
		if err != nil {
			return err
		}
		s := string(j)
		recs[i] = &s
	}
	_, err := tx.Exec(ctx, `INSERT INTO pgts.rollup_invalidation_range (rollup_id, lo_us, hi_us, vals)
		SELECT u.id, $2, $3, u.vals::jsonb FROM unnest($1::int[], $4::text[]) u(id, vals)
		WHERE EXISTS (SELECT 1 FROM pgts.rollup ru WHERE ru.id = u.id)`, ids, b.tlo, b.thi, recs)
	if err != nil {
		return fmt.Errorf("recording the batch for the rollups of %s: %w", l.target, err)
	}
	return nil
}

// batchValues reads back, for each column index in need, the distinct
// values b holds, as the text their type reads (nil: NULL); a column
// missing from the result has a type whose binary form is not read here.
func (l *Loader) batchValues(b *batch, need []int) map[int][]*string {
	if len(need) == 0 {
		return nil
	}
	last := 0
	for _, c := range need {
		last = max(last, c)
	}
	seen := make(map[int]map[string]bool, len(need))
	nulls := map[int]bool{}
	for _, c := range need {
		seen[c] = map[string]bool{}
	}
	data := b.enc.Bytes()
	start := 0
	for _, end := range b.ends {
		row := data[start:end]
		start = end
		if l.binary {
			p := 2 // field count
			for f := 0; f <= last && p+4 <= len(row); f++ {
				n := int(int32(binary.BigEndian.Uint32(row[p:])))
				p += 4
				var v []byte
				if n >= 0 {
					v, p = row[p:p+n], p+n
				}
				if s, ok := seen[f]; ok {
					if n < 0 {
						nulls[f] = true
					} else {
						s[string(v)] = true
					}
				}
			}
			continue
		}
		row = row[:len(row)-1] // '\n'
		for f := 0; f <= last; f++ {
			v := row
			if i := bytes.IndexByte(row, '\t'); i >= 0 {
				v, row = row[:i], row[i+1:]
			} else {
				row = nil
			}
			if s, ok := seen[f]; ok {
				if string(v) == `\N` {
					nulls[f] = true
				} else {
					s[string(v)] = true
				}
			}
		}
	}
	out := make(map[int][]*string, len(need))
	for _, c := range need {
		var vals []*string
		ok := true
		for raw := range seen[c] {
			t, good := textOf(l.binary, l.cols[c].Type.OID, []byte(raw))
			if !good {
				ok = false
				break
			}
			vals = append(vals, &t)
		}
		if !ok {
			continue
		}
		if nulls[c] {
			vals = append(vals, nil)
		}
		out[c] = vals
	}
	return out
}

// textOf is the text form of a field as COPY encoded it (binary: for the
// types read back here; text: unescaped).
func textOf(bin bool, oid uint32, v []byte) (string, bool) {
	if !bin {
		if strings.IndexByte(string(v), '\\') < 0 {
			return string(v), utf8.Valid(v)
		}
		var sb strings.Builder
		for i := 0; i < len(v); i++ {
			if v[i] != '\\' || i+1 == len(v) {
				sb.WriteByte(v[i])
				continue
			}
			i++
			switch v[i] {
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'v':
				sb.WriteByte('\v')
			case '\\':
				sb.WriteByte('\\')
			default:
				return "", false // octal and hex escapes: not read back here
			}
		}
		return sb.String(), utf8.ValidString(sb.String())
	}
	switch oid {
	case 16:
		if len(v) == 1 {
			return strconv.FormatBool(v[0] != 0), true
		}
	case 21:
		if len(v) == 2 {
			return strconv.FormatInt(int64(int16(binary.BigEndian.Uint16(v))), 10), true
		}
	case 23:
		if len(v) == 4 {
			return strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(v))), 10), true
		}
	case 20:
		if len(v) == 8 {
			return strconv.FormatInt(int64(binary.BigEndian.Uint64(v)), 10), true
		}
	case 19, 25, 1042, 1043:
		return string(v), utf8.Valid(v)
	case 700:
		if len(v) == 4 {
			return floatText(float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 32), true
		}
	case 701:
		if len(v) == 8 {
			return floatText(math.Float64frombits(binary.BigEndian.Uint64(v)), 64), true
		}
	case 2950:
		if len(v) == 16 {
			return fmt.Sprintf("%x-%x-%x-%x-%x", v[0:4], v[4:6], v[6:8], v[8:10], v[10:16]), true
		}
	}
	return "", false
}

func floatText(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}
