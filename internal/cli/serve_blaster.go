package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/pgts/pgts/internal/blast"
)

// blasterControl is the daemon's own load generator, for single-process
// tests (pgts serve --blaster): GET /blaster/set?rate=R&n=N sends Graphite
// plaintext to the daemon's own TCP listener at R points/s over N series
// until changed; rate=0 stops it. The answer is the current state as JSON.
type blasterControl struct {
	log  *slog.Logger
	addr func() string // the daemon's Graphite TCP address, once listening

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	b      *blast.Blaster
	rate   float64
	series int
}

type blasterState struct {
	Rate   float64     `json:"rate"`
	Series int         `json:"series"`
	Stats  blast.Stats `json:"stats"`
}

func (c *blasterControl) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rate, err := strconv.ParseFloat(q.Get("rate"), 64)
	if err != nil || rate < 0 {
		http.Error(w, "rate: a number of points/s, 0 to stop", http.StatusBadRequest)
		return
	}
	n := 1000
	if s := q.Get("n"); s != "" {
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			http.Error(w, "n: a number of series, at least 1", http.StatusBadRequest)
			return
		}
	}
	c.stop()
	if rate > 0 {
		cfg := blast.DefaultConfig()
		cfg.Addr, cfg.Rate, cfg.Series, cfg.Duration, cfg.Logger = c.addr(), rate, n, 0, c.log
		cfg.BatchSize = max(1, min(10000, int(rate/100)))
		b, err := blast.New(cfg)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		c.mu.Lock()
		c.b, c.cancel, c.done, c.rate, c.series = b, cancel, done, rate, n
		c.mu.Unlock()
		go func() {
			defer close(done)
			if _, err := b.Run(ctx); err != nil {
				c.log.Warn("blaster stopped", "err", err)
			}
		}()
		c.log.Info("blaster set", "rate", rate, "series", n)
	}
	c.mu.Lock()
	st := blasterState{Rate: c.rate, Series: c.series}
	if c.b != nil {
		st.Stats = c.b.Stats()
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(st) //nolint:errcheck // the client went away
}

// stop ends the running blast, if any, and waits for it.
func (c *blasterControl) stop() {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.cancel, c.done, c.b, c.rate, c.series = nil, nil, nil, 0, 0
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
