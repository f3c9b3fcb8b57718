package cli

import (
	"context"
	"errors"

	"github.com/pgts/pgts/internal/render"
	"github.com/pgts/pgts/internal/tsstore"
)

// renderSource serves the Graphite render API from the store.
//
// Windows and timestamps are the store's: tsstore.Store.Fetch returns
// graphite-web's window for a whisper file (whisper's file_fetch), each
// value labelled with the start of its slot, as Graphite does.
type renderSource struct{ s *tsstore.Store }

func (r renderSource) Find(ctx context.Context, pattern string) ([]render.Node, error) {
	nodes, err := r.s.Find(ctx, pattern)
	if errors.Is(err, tsstore.ErrPattern) {
		return nil, &render.InputError{Msg: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	out := make([]render.Node, len(nodes))
	for i, n := range nodes {
		out[i] = render.Node{Path: n.Path, Leaf: n.Leaf}
	}
	return out, nil
}

func (r renderSource) Fetch(ctx context.Context, names []string, from, until int64, maxDataPoints int) ([]render.Series, error) {
	series, err := r.s.Fetch(ctx, names, from, until, maxDataPoints)
	if err != nil {
		return nil, err
	}
	return toRenderSeries(series), nil
}

// FetchAt implements render.NowSource: archives chosen as of the
// request's now, as graphite-web's whisper reads do.
func (r renderSource) FetchAt(ctx context.Context, names []string, from, until, now int64, maxDataPoints int) ([]render.Series, error) {
	series, err := r.s.FetchAt(ctx, names, from, until, now, maxDataPoints)
	if err != nil {
		return nil, err
	}
	return toRenderSeries(series), nil
}

// FetchWindow implements render.WindowSource: a cut of the slots FetchAt
// returns, reading only those.
func (r renderSource) FetchWindow(ctx context.Context, names []string, from, until, now int64, maxDataPoints, lo, hi int) ([]render.Series, error) {
	series, err := r.s.FetchWindow(ctx, names, from, until, now, maxDataPoints, lo, hi)
	if err != nil {
		return nil, err
	}
	return toRenderSeries(series), nil
}

func toRenderSeries(series []tsstore.Series) []render.Series {
	out := make([]render.Series, len(series))
	for i, s := range series {
		out[i] = render.Series{Name: s.Name, Start: s.Start, Step: s.Step, Values: s.Values, Total: s.Total}
	}
	return out
}

var _ render.WindowSource = renderSource{}
