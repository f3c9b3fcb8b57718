package cli

import (
	"fmt"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress draws a bar on stderr when it is a terminal (and not --quiet):
// rows committed, rows/s, and an ETA when the total is known. The bar
// advances by rows (generators) or by input bytes (files). When stderr is
// not a terminal (a log file, CI), it logs one progress line every
// logEvery instead.
const logEvery = 10 * time.Second

type progress struct {
	p    *mpb.Progress
	bar  *mpb.Bar
	done chan struct{}
	wg   sync.WaitGroup
}

func newProgress(a *app, total int64, byRows bool, rows func() int64, position func() int64) *progress {
	pr := &progress{done: make(chan struct{})}
	if a.quiet {
		return pr
	}
	start := time.Now()
	if a.env.IsTerminal == nil || !a.env.IsTerminal() {
		pr.wg.Add(1)
		go func() {
			defer pr.wg.Done()
			t := time.NewTicker(logEvery)
			defer t.Stop()
			for {
				select {
				case <-pr.done:
					return
				case <-t.C:
					n, el := rows(), time.Since(start).Seconds()
					args := []any{"rows", commas(n), "rows_per_s", commas(int64(float64(n) / el))}
					if total > 0 {
						cur := n
						if !byRows && position != nil {
							cur = position()
						}
						args = append(args, "done", fmt.Sprintf("%.1f%%", 100*float64(cur)/float64(total)))
					}
					a.log.Info("progress", args...)
				}
			}
		}()
		return pr
	}
	rate := func(decor.Statistics) string {
		el := time.Since(start).Seconds()
		if el <= 0 {
			return ""
		}
		return fmt.Sprintf("%s rows  %s rows/s", commas(rows()), commas(int64(float64(rows())/el)))
	}
	pr.p = mpb.New(mpb.WithOutput(a.env.Stderr), mpb.WithRefreshRate(200*time.Millisecond), mpb.WithWidth(40))
	opts := []mpb.BarOption{
		mpb.PrependDecorators(decor.Any(rate, decor.WCSyncSpaceR)),
	}
	if total > 0 {
		opts = append(opts, mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO)))
	}
	pr.bar = pr.p.New(total, mpb.BarStyle(), opts...)
	pr.wg.Add(1)
	go func() {
		defer pr.wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-pr.done:
				return
			case <-t.C:
				if byRows {
					pr.bar.SetCurrent(rows())
				} else if position != nil {
					pr.bar.SetCurrent(position())
				}
			}
		}
	}()
	return pr
}

func (pr *progress) stop() {
	close(pr.done)
	pr.wg.Wait()
	if pr.bar != nil {
		pr.bar.Abort(false)
		pr.p.Wait()
	}
}
