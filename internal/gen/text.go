package gen

import (
	"context"
	"io"

	"github.com/pgts/pgts/internal/copyenc"
)

// textChunk is how many bytes WriteText gathers before each Write.
const textChunk = 256 << 10

// WriteText writes the remaining rows of g to w in COPY text format, one
// line a row, for `COPY … FROM STDIN` (without the COPY command or the
// "\." end marker). A generator that is a TextAppender (conditions)
// spells its rows itself; the others go through copyenc.TextWriter.
// conditions' times carry no zone, as in the study's generator: the
// session loading them must have TimeZone set to UTC (PGTZ=UTC for psql).
//
// It writes in chunks of about 256 kB and stops early, returning
// ctx.Err(), when ctx is done (checked between chunks); it returns w's
// first error. w is not flushed or closed.
func WriteText(ctx context.Context, w io.Writer, g Generator) error {
	if ta, ok := g.(TextAppender); ok {
		buf := make([]byte, 0, textChunk+4096)
		for g.Next() {
			buf = ta.AppendTextRow(buf)
			if len(buf) >= textChunk {
				if err := flushText(ctx, w, buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		return flushText(ctx, w, buf)
	}
	tw := copyenc.NewTextWriter(textChunk + 16<<10)
	for g.Next() {
		g.Encode(tw)
		if tw.Len() >= textChunk {
			if err := flushText(ctx, w, tw.Bytes()); err != nil {
				return err
			}
			tw.Reset()
		}
	}
	return flushText(ctx, w, tw.Bytes())
}

// flushText writes b unless ctx is done.
func flushText(ctx context.Context, w io.Writer, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(b) == 0 {
		return nil
	}
	_, err := w.Write(b)
	return err
}
