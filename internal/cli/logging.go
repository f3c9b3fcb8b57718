package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// logHandler writes one line per record to stderr for people:
// "17:04:05 message key=value", with WARN/ERROR spelled out.
type logHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Leveler
	attrs []slog.Attr
}

func newLogHandler(w io.Writer, level slog.Leveler) *logHandler {
	return &logHandler{mu: &sync.Mutex{}, w: w, level: level}
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Time.Format(time.TimeOnly))
	b.WriteByte(' ')
	if r.Level >= slog.LevelWarn {
		b.WriteString(r.Level.String())
		b.WriteByte(' ')
	}
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \t\"=") || v == "" {
			v = fmt.Sprintf("%q", v)
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *logHandler) WithGroup(string) slog.Handler { return h }

func stderrIsTerminal() bool { return barTerminal(int(os.Stderr.Fd())) }

// barTerminal reports whether fd is a terminal a progress bar can be drawn
// on: one with a width. A pseudo-terminal without a size (some CI runners,
// script(1)) gets the periodic progress lines instead: the bar drew
// nothing there.
func barTerminal(fd int) bool {
	if !term.IsTerminal(fd) {
		return false
	}
	w, _, err := term.GetSize(fd)
	return err == nil && w > 0
}
