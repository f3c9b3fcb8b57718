package gen

import (
	"fmt"
	"time"

	"github.com/pgts/pgts/internal/copyenc"
)

// events generates an audit log:
//
//	id          bigint       1, 2, 3, … (the row index + 1)
//	event_id    uuid         random (version 4)
//	type        text         one of 12 event types, skewed toward logins
//	created_at  timestamptz  Start + row ms ± up to 2.5 s of jitter
//	payload     jsonb        a JSON object of about 2 kB (1.8 to 2.3 kB)
//
// The payload has nested objects (actor, target, context with trace, geo
// and client), a "categories" array of 2 to 6 strings, a "changes" array
// of objects, a "categories_ids" array of 1 to 8 random ids (1 to 1,000)
// and a free-text message. Some strings hold non-ASCII text
// and JSON escapes (\", \n, \\), so a text load exercises COPY's escaping.
// It is built by appends into a buffer the generator reuses.
type events struct {
	span
	*eventsConfig
	rs stream // the row's id, type and time
	ps stream // the row's payload

	// the current row
	micros  int64
	uuid    [16]byte
	typ     *eventType
	payload []byte // the payload of row built
	built   int64  // the row payload holds, or -1
}

const (
	eventsStepMicros   = 1000      // one event a millisecond on average
	eventsJitterMicros = 2_500_000 // created_at is off its slot by up to this much
	eventsSalt         = 0x6576656e_74730001
	eventsPayloadSalt  = 0x6576656e_74730002
	eventsPayloadMin   = 1800 // target payload size: uniform in [min, max]
	eventsPayloadMax   = 2300
)

type eventsConfig struct {
	total       int64
	key, payKey uint64
	start       int64 // micros
	step        int64 // micros between rows' slots
	payMin      int   // payload size range, bytes
	payMax      int
	cols        []Column
	words       *wordTable
}

func newEventsConfig(o Options) (*eventsConfig, error) {
	c := &eventsConfig{total: o.Rows, key: streamKey(o.Seed, eventsSalt), payKey: streamKey(o.Seed, eventsPayloadSalt),
		start: o.Start.UnixMicro(), words: messageWords(), step: eventsStepMicros, payMin: eventsPayloadMin, payMax: eventsPayloadMax}
	if o.Step > 0 {
		c.step = o.Step.Microseconds()
	}
	if o.PayloadBytes > 0 {
		c.payMin, c.payMax = o.PayloadBytes-o.PayloadBytes/8, o.PayloadBytes+o.PayloadBytes/8
	}
	first := c.start - eventsJitterMicros
	if c.total > 1 && c.step > (endMicros-minMicros)/(c.total-1) {
		return nil, fmt.Errorf("%s: %d rows %s apart leave the years 1 to 9999; choose a shorter step or fewer rows", kindEvents, c.total, time.Duration(c.step)*time.Microsecond)
	}
	last := c.start + (c.total-1)*c.step + eventsJitterMicros
	if err := checkTimes(kindEvents, first, last); err != nil {
		return nil, err
	}
	c.cols = []Column{
		{Name: "id", Type: "bigint", NotNull: true},
		{Name: "event_id", Type: "uuid", NotNull: true},
		{Name: "type", Type: "text", NotNull: true},
		{Name: "created_at", Type: "timestamptz", NotNull: true},
		{Name: "payload", Type: "jsonb", NotNull: true},
	}
	return c, nil
}

func newEvents(c *eventsConfig, lo, hi int64) *events {
	return &events{span: newSpan(lo, hi), eventsConfig: c, built: -1,
		payload: make([]byte, 0, c.payMax+512)}
}

// Columns implements Generator.
func (g *events) Columns() []Column { return g.cols }

// TimeColumn implements Generator: created_at.
func (g *events) TimeColumn() int { return 3 }

// Time implements Generator.
func (g *events) Time() int64 { return g.micros }

// Next implements Generator. The payload is built by Encode, so rows a
// loader rejects on their time cost little.
func (g *events) Next() bool {
	if !g.advance() {
		return false
	}
	rs := &g.rs
	rs.reset(g.key, g.row)
	g.micros = g.start + g.row*g.step + rs.rangeIn(-eventsJitterMicros, eventsJitterMicros)
	hi, lo := rs.uint64(), rs.uint64()
	for k := range 8 {
		g.uuid[k] = byte(hi >> (56 - 8*k))
		g.uuid[8+k] = byte(lo >> (56 - 8*k))
	}
	g.uuid[6] = g.uuid[6]&0x0f | 0x40 // version 4
	g.uuid[8] = g.uuid[8]&0x3f | 0x80 // variant 10 (RFC 9562)
	g.typ = pickEventType(rs.intn(eventWeightTotal))
	return true
}

// Encode implements Generator.
func (g *events) Encode(w copyenc.FieldWriter) {
	if g.built != g.row {
		g.payload = g.appendPayload(g.payload[:0])
		g.built = g.row
	}
	w.BeginRow(5)
	w.Int8(g.row + 1)
	w.UUID(g.uuid)
	w.String(g.typ.name)
	w.Timestamp(g.micros)
	w.JSONB(g.payload)
}
