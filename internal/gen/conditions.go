package gen

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/pgts/pgts/internal/copyenc"
)

// conditions reproduces the generator of the Postgres-vs-TimescaleDB
// loading study (the fill.c program of the pg-ts-tests repository): the
// table conditions(time timestamptz, device integer, data1..dataW float8),
// loaded in batches of 10,000 rows, each batch 60 s of simulated time.
//
// For batch i and row j of the batch (0-based; B rows a batch, D devices):
//
//	device = 1 + j % D
//	t      = 60·i + ⌊60·j / B⌋                            seconds
//	d      = ((1+i) % 17)·((1+j) % 19) + (i·j % 23)        i·j in 32-bit two's complement
//	data_k = ((d + 11·(k-1)) % 320) / 151.0, printed "%.2f" k = 1..W, % truncating as in C
//
// t is spelled on a calendar of 28-day months and 336-day years from
// 1970 (the C program's arithmetic), and that civil date and time is the
// row's time in UTC:
//
//	year = 1970 + t / (336·86400)    month = 1 + t / (28·86400) % 12
//	day  = 1 + t / 86400 % 28        hh:mm:ss = t % 86400
//
// so time jumps from 1970-01-28 23:59:59 to 1970-02-01 00:00:00 at
// t = 28·86400 (batch 40,320), and from 1970-12-28 23:59:59 to 1971-01-01
// 00:00:00 at t = 336·86400 (batch 483,840). Options.Start adds the offset
// from 1970-01-01 to Start to every row's time.
//
// The C program computes i·j in an int: from batch 214,770 on (with
// 10,000-row batches) the product can wrap around, and d, hence some data
// values, become negative. The generator does the same, so its rows stay
// those of the study at any size.
//
// Every data value is the double PostgreSQL reads from its two-decimal
// text, so binary and text loads store identical rows.
type conditions struct {
	span
	*conditionsConfig

	// the current row
	i, j   int64 // batch, row within the batch
	sec    int64 // ⌊60·j / B⌋
	rem    int64 // 60·j - sec·B
	a17    int32 // (1+i) % 17
	b19    int32 // (1+j) % 19
	prod   int32 // i·j, wrapped to 32 bits
	device int32
	d      int32
	t      int64 // seconds on the 28/336-day calendar
	micros int64 // the row's time; valid for t

	// the text of the current time, valid while tsLen > 0 and tsMicros == micros
	tsMicros int64
	tsLen    int
	ts       [26]byte
}

// conditionsConfig is what the parts of one conditions output share; it
// is read only after construction.
type conditionsConfig struct {
	total     int64
	batchRows int64
	devices   int32
	width     int
	offset    int64 // micros from 1970-01-01 to Start
	cols      []Column
	tab       *conditionsTables
}

// conditionsTables hold the 639 possible data values, indexed by the
// remainder (d + 11·(k-1)) % 320 plus 320.
type conditionsTables struct {
	value [640]float64 // the double PostgreSQL parses from text[v]
	text  [640]string  // "\t" + the C program's "%.2f"
}

// conditionsTab builds the tables once per process, on first use.
var conditionsTab = sync.OnceValue(func() *conditionsTables {
	t := new(conditionsTables)
	for v := -319; v <= 319; v++ {
		s := strconv.FormatFloat(float64(v)/151.0, 'f', 2, 64)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			panic("gen: unparsable conditions value " + s) // unreachable: FormatFloat's own output
		}
		t.value[v+320], t.text[v+320] = f, "\t"+s
	}
	return t
})

// Seconds of the conditions calendar.
const (
	condDay   = 86400
	condMonth = 28 * condDay
	condYear  = 12 * condMonth
)

// conditionsMicros maps t seconds on the 28/336-day calendar to the civil
// time it spells, in micros (before the Start offset).
func conditionsMicros(t int64) int64 {
	y := 1970 + t/condYear
	m := 1 + t/condMonth%12
	d := 1 + t/condDay%28
	return (daysFromCivil(y, m, d)*condDay + t%condDay) * microsPerSecond
}

func newConditionsConfig(o Options) (*conditionsConfig, error) {
	b := int64(o.BatchRows)
	total := o.Rows
	if total == 0 {
		if o.Batches > MaxRows/b {
			return nil, fmt.Errorf("conditions: %d batches of %d rows: more than %d rows", o.Batches, b, int64(MaxRows))
		}
		total = o.Batches * b
	}
	c := &conditionsConfig{total: total, batchRows: b, devices: int32(o.Devices), width: o.Width,
		offset: o.Start.UnixMicro(), tab: conditionsTab()}
	last := total - 1
	tLast := 60*(last/b) + 60*(last%b)/b
	if tLast > maxSeconds {
		return nil, fmt.Errorf("conditions: %d rows in batches of %d span %d s of the study's calendar, more than its %d", total, b, tLast+1, maxSeconds+1)
	}
	if err := checkTimes(kindConditions, c.offset, conditionsMicros(tLast)+c.offset); err != nil {
		return nil, err
	}
	c.cols = make([]Column, 0, 2+c.width)
	c.cols = append(c.cols, Column{Name: "time", Type: "timestamptz", NotNull: true},
		Column{Name: "device", Type: "integer", NotNull: true})
	for k := 1; k <= c.width; k++ {
		c.cols = append(c.cols, Column{Name: "data" + strconv.Itoa(k), Type: "double precision"})
	}
	return c, nil
}

func newConditions(c *conditionsConfig, lo, hi int64) *conditions {
	return &conditions{span: newSpan(lo, hi), conditionsConfig: c, t: -1}
}

// Columns implements Generator: time, device, data1..dataW.
func (g *conditions) Columns() []Column { return g.cols }

// TimeColumn implements Generator.
func (g *conditions) TimeColumn() int { return 0 }

// Time implements Generator.
func (g *conditions) Time() int64 { return g.micros }

// Next implements Generator. Within a batch it steps every quantity
// incrementally; it divides only at batch starts and when t moves.
func (g *conditions) Next() bool {
	if !g.advance() {
		return false
	}
	if g.row == g.first || g.j+1 == g.batchRows {
		g.seek(g.row)
	} else {
		g.j++
		g.rem += 60
		if g.rem >= g.batchRows {
			q := g.rem / g.batchRows
			g.sec += q
			g.rem -= q * g.batchRows
		}
		if g.device++; g.device > g.devices {
			g.device = 1
		}
		if g.b19++; g.b19 == 19 {
			g.b19 = 0
		}
		g.prod += int32(g.i) // wraps like the C int product
	}
	g.d = g.a17*g.b19 + g.prod%23
	if t := 60*g.i + g.sec; t != g.t {
		g.t = t
		g.micros = conditionsMicros(t) + g.offset
	}
	return true
}

// seek computes the row's state from its index.
func (g *conditions) seek(row int64) {
	g.i, g.j = row/g.batchRows, row%g.batchRows
	g.sec, g.rem = 60*g.j/g.batchRows, 60*g.j%g.batchRows
	g.device = int32(1 + g.j%int64(g.devices))
	g.a17 = int32((1 + g.i) % 17)
	g.b19 = int32((1 + g.j) % 19)
	g.prod = int32(g.i) * int32(g.j) // both fit an int32; the product wraps
}

// Encode implements Generator.
func (g *conditions) Encode(w copyenc.FieldWriter) {
	w.BeginRow(2 + g.width)
	w.Timestamp(g.micros)
	w.Int4(g.device)
	vals := &g.tab.value
	v := int(g.d) // in [-22, 310]
	for range g.width {
		w.Float8(vals[v+320])
		if v += 11; v >= 320 {
			v -= 320
		}
	}
}

// AppendTextRow implements TextAppender with the C program's line:
//
//	printf("%04d-%02d-%02d %02d:%02d:%02d.%06d\t%d", ...) then "\t%.2f" per data column, "\n"
//
// e.g. "1970-01-01 00:00:00.000000\t1\t0.01\t0.08\t0.15\t0.23\t0.30\n".
// The time carries no zone, as there: load it with the session's
// TimeZone set to UTC, or the rows move by the zone's offset.
func (g *conditions) AppendTextRow(dst []byte) []byte {
	if g.tsLen == 0 || g.tsMicros != g.micros {
		g.tsLen = len(appendCivil(g.ts[:0], g.micros, ' '))
		g.tsMicros = g.micros
	}
	dst = append(dst, g.ts[:g.tsLen]...)
	dst = append(dst, '\t')
	dst = strconv.AppendInt(dst, int64(g.device), 10)
	text := &g.tab.text
	v := int(g.d)
	for range g.width {
		dst = append(dst, text[v+320]...)
		if v += 11; v >= 320 {
			v -= 320
		}
	}
	return append(dst, '\n')
}
