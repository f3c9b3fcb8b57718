package gen

import (
	"github.com/pgts/pgts/internal/copyenc"
)

// iibench generates the rows of the insert benchmark's purchases_index
// table (iibench.py), in primary-key order:
//
//	transactionid   bigint            1, 2, 3, … (the row index + 1)
//	dateandtime     timestamptz       Start + ⌊row / 100,000⌋ s
//	cashregisterid  integer           uniform in [0, 1,000)
//	customerid      integer           uniform in [0, 100,000)
//	productid       integer           uniform in [0, 10,000)
//	price           double precision  uniform in [0, 500), whole cents
//	data            varchar(4000)     10 to 20 random letters and digits
//
// iibench.py stamps each 1,000-row commit with now + rows so far / 100,000
// seconds, at one-second precision; dateandtime does the same from a
// fixed Start, so the output is deterministic. It prints the price with
// "%.2f": the generated price is a whole number of cents, the double
// PostgreSQL reads from that text, so text and binary loads agree. The
// table's own DDL (transactionid bigserial primary key, the secondary
// indexes) is the caller's.
type iibench struct {
	span
	*iibenchConfig
	rs stream

	// the current row
	micros           int64
	cash, cust, prod int32
	price            float64
	dataLen          int
	data             [iibenchDataMax]byte
}

const (
	iibenchRowsPerSecond = 100_000
	iibenchDataMin       = 10
	iibenchDataMax       = 20
	iibenchSalt          = 0x69696265_6e636801 // "iibench", 1
)

type iibenchConfig struct {
	total int64
	key   uint64
	start int64 // micros
	cols  []Column
}

func newIIBenchConfig(o Options) (*iibenchConfig, error) {
	c := &iibenchConfig{total: o.Rows, key: streamKey(o.Seed, iibenchSalt), start: o.Start.UnixMicro()}
	last := c.start + (c.total-1)/iibenchRowsPerSecond*microsPerSecond
	if err := checkTimes(kindIIBench, c.start, last); err != nil {
		return nil, err
	}
	c.cols = []Column{
		{Name: "transactionid", Type: "bigint", NotNull: true},
		{Name: "dateandtime", Type: "timestamptz"},
		{Name: "cashregisterid", Type: "integer", NotNull: true},
		{Name: "customerid", Type: "integer", NotNull: true},
		{Name: "productid", Type: "integer", NotNull: true},
		{Name: "price", Type: "double precision", NotNull: true},
		{Name: "data", Type: "varchar(4000)"},
	}
	return c, nil
}

func newIIBench(c *iibenchConfig, lo, hi int64) *iibench {
	return &iibench{span: newSpan(lo, hi), iibenchConfig: c}
}

// Columns implements Generator.
func (g *iibench) Columns() []Column { return g.cols }

// TimeColumn implements Generator: dateandtime.
func (g *iibench) TimeColumn() int { return 1 }

// Time implements Generator.
func (g *iibench) Time() int64 { return g.micros }

// Next implements Generator.
func (g *iibench) Next() bool {
	if !g.advance() {
		return false
	}
	g.micros = g.start + g.row/iibenchRowsPerSecond*microsPerSecond
	rs := &g.rs
	rs.reset(g.key, g.row)
	g.cash = int32(rs.intn(1000))
	g.cust = int32(rs.intn(100_000))
	g.prod = int32(rs.intn(10_000))
	g.price = float64(rs.intn(50_000)) / 100 // the nearest double to the cents, as float8in reads "%.2f"
	g.dataLen = int(rs.rangeIn(iibenchDataMin, iibenchDataMax))
	rs.fillAlnum(g.data[:g.dataLen])
	return true
}

// Encode implements Generator.
func (g *iibench) Encode(w copyenc.FieldWriter) {
	w.BeginRow(7)
	w.Int8(g.row + 1)
	w.Timestamp(g.micros)
	w.Int4(g.cash)
	w.Int4(g.cust)
	w.Int4(g.prod)
	w.Float8(g.price)
	w.Text(g.data[:g.dataLen])
}
