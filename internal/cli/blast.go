package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/blast"
)

// defaultBlastAddr is the listener of `pgts serve`'s default config that
// speaks each protocol.
var defaultBlastAddr = map[string]string{
	"graphite":     "127.0.0.1:2003",
	"statsd":       "127.0.0.1:8125",
	"influx":       "127.0.0.1:8080",
	"remote-write": "127.0.0.1:8080",
}

func newBlastCmd(a *app) *cobra.Command {
	cfg := blast.DefaultConfig()
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "blast",
		Short: "Send synthetic metric points to a daemon at a fixed rate",
		Long: `Send synthetic points over a real protocol — Graphite plaintext over TCP,
StatsD counters over UDP, Influx line protocol or Prometheus remote write
over HTTP — to pgts serve or any daemon that speaks it, at --rate points per
second spread over --series series (prefix.0000000 ...), for --duration.

It reports points sent and acknowledged (an HTTP 2xx; for TCP a write that
succeeded; for UDP a datagram sent) and the achieved rate, every 10 seconds
on stderr and at the end on stdout (--json for JSON).`,
		Example: `  pgts blast --rate 50000 --series 100000 --duration 1m
  pgts blast --protocol remote-write --addr 127.0.0.1:8080 --rate 20000 --token "$TOKEN"
  pgts blast --protocol statsd --rate 10000 --series 1000`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("addr") {
				cfg.Addr = defaultBlastAddr[cfg.Protocol]
			}
			b, err := blast.New(cfg)
			if err != nil {
				return usagef("%v", err)
			}
			ctx := cmd.Context()
			var wg sync.WaitGroup
			done := make(chan struct{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := time.NewTicker(logEvery)
				defer t.Stop()
				for {
					select {
					case <-done:
						return
					case <-t.C:
						st := b.Stats()
						a.log.Info("blasting", "sent", commas(st.Sent), "acked", commas(st.Acked), "errors", st.Errors,
							"acked_per_s", commas(int64(st.Rate())))
					}
				}
			}()
			a.log.Info("blasting", "protocol", cfg.Protocol, "addr", cfg.Addr, "rate", cfg.Rate, "series", cfg.Series, "duration", cfg.Duration)
			st, runErr := b.Run(ctx)
			close(done)
			wg.Wait()
			if asJSON {
				if err := writeJSON(a, map[string]any{"protocol": cfg.Protocol, "addr": cfg.Addr, "target_rate": cfg.Rate,
					"series": cfg.Series, "stats": st, "acked_per_second": st.Rate()}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(a.env.Stdout, "%s: sent %s, acknowledged %s points in %s (%s points/s, target %s); %d failed sends\n",
					cfg.Protocol, commas(st.Sent), commas(st.Acked), st.Elapsed.Round(time.Millisecond),
					commas(int64(st.Rate())), commas(int64(cfg.Rate)), st.Errors)
			}
			if runErr != nil {
				return runErr
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Protocol, "protocol", cfg.Protocol, "protocol: "+strings.Join(blast.Protocols, ", "))
	f.StringVar(&cfg.Addr, "addr", "", "host:port to send to (default: pgts serve's default listener for the protocol)")
	f.Float64Var(&cfg.Rate, "rate", cfg.Rate, "points per second")
	f.IntVar(&cfg.Series, "series", cfg.Series, "distinct series")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long to send (0: until interrupted)")
	f.IntVar(&cfg.BatchSize, "batch", cfg.BatchSize, "points per write or request")
	f.StringVar(&cfg.Prefix, "prefix", cfg.Prefix, "series name prefix")
	f.StringVar(&cfg.Token, "token", "", "bearer token for the HTTP protocols")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
