package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/pgts/pgts/internal/pg"
)

// stepWork is what a step's workers measured.
type stepWork struct {
	inserts, queries int64
	insLat, qryLat   *latencyRecorder
	ops              *perSecond // the step's main ops: inserts, or queries for q steps
	err              error
}

// step runs one step and measures it; it never panics on a failed step
// but returns it incomplete with its error.
func (r *insertRunner) step(ctx context.Context, name string) InsertStep {
	st := InsertStep{Name: name, WriteFrom: "server-io"}
	host0, hostErr := hostBusySeconds()
	srv0, cli0 := ServerTimes(r.postmaster), SelfTimes()
	var wal0 string
	if err := r.pool.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&wal0); err != nil {
		st.Error = fmt.Sprintf("reading the WAL position: %v", err)
		return st
	}
	start := time.Now()
	w := stepWork{insLat: newLatencyRecorder(), qryLat: newLatencyRecorder(), ops: newPerSecond(start)}
	switch {
	case name == StepLoad:
		w.inserts, w.err = r.write(ctx, r.s.RowsLoad, 100, nil, time.Time{}, &w, true)
	case name == StepIndex:
		w.err = r.createIndexes(ctx)
	case name == StepMore:
		w.inserts, w.err = r.write(ctx, r.s.RowsMore, 50, nil, time.Time{}, &w, true)
	case name == StepSmall:
		w.inserts, w.err = r.write(ctx, r.s.RowsMore/5, 5, nil, time.Time{}, &w, true)
	case IsQueryStep(name):
		target, err := strconv.Atoi(name[2:])
		if err != nil {
			st.Error = fmt.Sprintf("step %q: no rate", name)
			return st
		}
		st.TargetIPS = float64(target)
		r.readWrite(ctx, target, name[1] == 'p', start.Add(r.s.QueryTime), &w)
	default:
		st.Error = fmt.Sprintf("unknown step %q", name)
		return st
	}
	elapsed := time.Since(start)
	host1, hostErr1 := hostBusySeconds()
	srv, cli := ServerTimes(r.postmaster).Sub(srv0), SelfTimes().Sub(cli0)

	st.Seconds = elapsed.Seconds()
	st.Inserts, st.Queries = w.inserts, w.queries
	if st.Seconds > 0 {
		st.IPS, st.QPS = float64(w.inserts)/st.Seconds, float64(w.queries)/st.Seconds
	}
	st.WriterSlow = st.TargetIPS > 0 && st.IPS < 0.95*st.TargetIPS
	st.ClientCPU, st.ServerCPU, st.WriteBytes = cli.CPUSeconds, srv.CPUSeconds, srv.WriteBytes
	if srv.Unavailable {
		st.ServerCPU, st.WriteBytes = -1, 0
	}
	if hostErr == nil && hostErr1 == nil {
		st.HostCPU = host1 - host0
	}
	ops, lat := st.Inserts, w.insLat
	if IsQueryStep(name) {
		ops, lat = st.Queries, w.qryLat
	}
	if ops > 0 {
		st.CPUPerOp = st.HostCPU * 1e6 / float64(ops)
	}
	if l := lat.latency(); l != nil {
		st.MaxOpMS = float64(l.MaxUS) / 1000
	}
	st.InsertLatency, st.QueryLatency = w.insLat.latency(), w.qryLat.latency()
	st.PerSecond = w.ops.seconds(elapsed)
	st.RateP50, st.RateP99 = Percentile(st.PerSecond, 50), Percentile(st.PerSecond, 99)
	if len(st.PerSecond) > 0 {
		st.RateMin = Percentile(st.PerSecond, 0)
	}

	// The figures below need the server; a cancelled ctx must not lose
	// the step's measurements, so they get a short context of their own.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var dbBytes int64
	if err := r.pool.QueryRow(mctx, "SELECT pg_current_wal_lsn() - $1::pg_lsn, pg_database_size(current_database())", wal0).
		Scan(&st.WALBytes, &dbBytes); err != nil && w.err == nil {
		w.err = fmt.Errorf("measuring: %w", err)
	}
	st.DBGB = float64(dbBytes) / (1 << 30)
	written := st.WriteBytes
	if srv.Unavailable {
		written, st.WriteFrom = st.WALBytes, "wal"
	}
	if st.Inserts > 0 {
		st.WKBPerIns = float64(written) / 1024 / float64(st.Inserts)
	}
	if w.err != nil {
		st.Error = w.err.Error()
		return st
	}
	st.Complete = true
	return st
}

func (r *insertRunner) createIndexes(ctx context.Context) error {
	for _, ix := range secondaryIndexes {
		sql := fmt.Sprintf("CREATE INDEX %s ON %s (%s)", pg.QuoteIdent(purchases+"_"+ix[0]), pg.QuoteIdent(purchases), ix[1])
		if _, err := r.pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("creating index %s: %w", ix[0], err)
		}
	}
	return nil
}

// insertSQL is the multi-row INSERT of n rows; transactionid comes from
// its sequence, in commit order.
func (r *insertRunner) insertSQL(n int) string {
	if s, ok := r.stmts[n]; ok {
		return s
	}
	var b strings.Builder
	b.WriteString("INSERT INTO " + pg.QuoteIdent(purchases) + " (dateandtime, cashregisterid, customerid, productid, price, data) VALUES ")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "($%d,$%d,$%d,$%d,$%d,$%d)", 6*i+1, 6*i+2, 6*i+3, 6*i+4, 6*i+5, 6*i+6)
	}
	r.stmts[n] = b.String()
	return r.stmts[n]
}

// write inserts up to rows rows, perCommit a statement (each its own
// transaction), waiting on lim before each statement when lim is not nil,
// and stopping at deadline when it is not zero. countOps says whether its
// inserts are the step's main ops. Only one write runs at a time (the
// generator is not safe for concurrent use).
func (r *insertRunner) write(ctx context.Context, rows int64, perCommit int, lim *rate.Limiter, deadline time.Time,
	w *stepWork, countOps bool) (int64, error) {
	waitCtx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	rec := &valueRecorder{}
	args := make([]any, 0, 6*perCommit)
	var done int64
	for rows < 0 || done < rows {
		n := perCommit
		if rows >= 0 {
			n = int(min(int64(perCommit), rows-done))
		}
		if lim != nil {
			if err := lim.WaitN(waitCtx, n); err != nil {
				if ctx.Err() != nil {
					return done, ctx.Err()
				}
				return done, nil // the next commit would pass the deadline
			}
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return done, nil
		}
		args = args[:0]
		var first, last int64
		for i := 0; i < n; i++ {
			if !r.g.Next() {
				return done, errors.New("the iibench generator ran out of rows")
			}
			if i == 0 {
				first = r.g.Time()
			}
			last = r.g.Time()
			rec.vals = rec.vals[:0]
			r.g.Encode(rec)
			args = append(args, rec.vals[1:]...) // transactionid: the sequence's
		}
		t0 := time.Now()
		if r.series != nil {
			if _, err := r.mgr.Ensure(ctx, r.series, []int64{first, last}); err != nil {
				return done, fmt.Errorf("making partitions: %w", err)
			}
		}
		if _, err := r.pool.Exec(ctx, r.insertSQL(n), args...); err != nil {
			return done, fmt.Errorf("insert: %w", err)
		}
		t1 := time.Now()
		w.insLat.record(t1.Sub(t0))
		if countOps {
			w.ops.add(t1, int64(n))
		}
		done += int64(n)
		r.inserted.Add(int64(n))
	}
	return done, nil
}

// readWrite runs one rate-limited writer and one reader until deadline.
func (r *insertRunner) readWrite(ctx context.Context, target int, point bool, deadline time.Time, w *stepWork) {
	// The bucket holds a second of inserts, so a commit slowed by a stall
	// is made up for afterwards and the step averages the target; it
	// starts empty, so the step does not open with a burst.
	burst := max(insertRows, target)
	lim := rate.NewLimiter(rate.Limit(target), burst)
	lim.AllowN(time.Now(), burst)
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.inserts, werr = r.write(ctx, -1, insertRows, lim, deadline, w, false)
	}()
	rerr := r.read(ctx, point, deadline, w)
	wg.Wait()
	w.err = errors.Join(werr, rerr)
}

// read runs queries back to back until deadline: range queries on the
// secondary indexes in turn, or point queries of 10 random keys.
func (r *insertRunner) read(ctx context.Context, point bool, deadline time.Time, w *stepWork) error {
	rnd := rand.New(rand.NewPCG(r.s.Seed, uint64(deadline.UnixNano())))
	q := pg.QuoteIdent(purchases)
	ranges := []struct {
		sql string
		max int
	}{
		{"SELECT price, customerid FROM " + q + " WHERE productid >= $1 ORDER BY productid, customerid, price LIMIT 10", 10_000},
		{"SELECT price, customerid FROM " + q + " WHERE cashregisterid >= $1 ORDER BY cashregisterid, customerid, price LIMIT 10", 1_000},
		{"SELECT price, customerid FROM " + q + " WHERE price >= $1 ORDER BY price, dateandtime, customerid LIMIT 10", 500},
	}
	pointSQL := "SELECT transactionid, price FROM " + q + " WHERE transactionid = ANY($1)"
	keys := make([]int64, 10)
	for i := 0; time.Now().Before(deadline); i++ {
		sql, arg := "", any(nil)
		if point {
			n := max(r.inserted.Load(), 1)
			for k := range keys {
				keys[k] = 1 + rnd.Int64N(n)
			}
			sql, arg = pointSQL, keys
		} else {
			rq := ranges[i%len(ranges)]
			sql, arg = rq.sql, rnd.IntN(rq.max)
		}
		t0 := time.Now()
		rows, err := r.pool.Query(ctx, sql, arg)
		if err != nil {
			return fmt.Errorf("query: %w", err)
		}
		for rows.Next() {
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("query: %w", err)
		}
		t1 := time.Now()
		w.qryLat.record(t1.Sub(t0))
		w.ops.add(t1, 1)
		w.queries++
	}
	return nil
}
