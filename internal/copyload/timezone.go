package copyload

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyenc"
)

// SessionZones learns how a psql session on the pool's database would
// read dates and times, so that the loader reads them the same way: its
// TimeZone (the database's or role's default, the server's, or PGTZ; or
// override when not empty), its DateStyle field order, its time zone
// abbreviations and the zone names the server knows.
//
// pgts' own connections run with TimeZone UTC, so the defaults are read
// on one extra short-lived connection opened without pgts' session
// settings. An override the server does not know is refused.
func SessionZones(ctx context.Context, pool *pgxpool.Pool, override string) (*copyenc.Zones, error) {
	cfg := pool.Config().ConnConfig.Copy()
	for k := range cfg.RuntimeParams {
		if strings.EqualFold(k, "TimeZone") && k != "timezone" || strings.EqualFold(k, "DateStyle") {
			delete(cfg.RuntimeParams, k) // pgts' own; "timezone" comes from PGTZ, as for psql
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("reading the session's time zone: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if override != "" {
		if _, err := conn.Exec(ctx, "SELECT set_config('TimeZone', $1, false)", override); err != nil {
			return nil, fmt.Errorf("time zone %q: %w", override, err)
		}
	}
	var tz, style string
	if err := conn.QueryRow(ctx, "SELECT current_setting('TimeZone'), current_setting('DateStyle')").Scan(&tz, &style); err != nil {
		return nil, fmt.Errorf("reading the session's time zone: %w", err)
	}
	abbrevs, names, err := serverZones(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("reading the server's time zones: %w", err)
	}
	z, err := copyenc.NewZones(copyenc.ZonesConfig{Session: tz, DateOrder: dateOrder(style), Abbrevs: abbrevs, Names: names})
	if err != nil {
		return nil, fmt.Errorf("the session's %w; choose one with --timezone", err)
	}
	return z, nil
}

// dateOrder reads the field order of a DateStyle setting ("ISO, MDY").
func dateOrder(style string) copyenc.DateOrder {
	s := strings.ToUpper(style)
	switch {
	case strings.Contains(s, "DMY"):
		return copyenc.DMY
	case strings.Contains(s, "YMD"):
		return copyenc.YMD
	}
	return copyenc.MDY
}

func serverZones(ctx context.Context, conn *pgx.Conn) ([]copyenc.Abbrev, []string, error) {
	rows, err := conn.Query(ctx, copyenc.AbbrevsSQL)
	if err != nil {
		return nil, nil, err
	}
	abbrevs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (copyenc.Abbrev, error) {
		var a copyenc.Abbrev
		err := r.Scan(&a.Name, &a.Offset, &a.IsDST, &a.Dynamic)
		return a, err
	})
	if err != nil {
		return nil, nil, err
	}
	rows, err = conn.Query(ctx, copyenc.NamesSQL)
	if err != nil {
		return nil, nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return abbrevs, names, err
}

// UseZones makes the target read dates and timestamps in z's session:
// its codecs and the time column's routing alike. Without it they are
// read as in a UTC session. Call it before the load starts.
func (t *Target) UseZones(z *copyenc.Zones) {
	t.zones = z
	for i := range t.Columns {
		if c, ok := copyenc.LookupIn(t.Columns[i].Type, z); ok {
			t.Columns[i].Codec = c
		}
	}
}

// Zones returns the session the target reads dates and times in.
func (t *Target) Zones() *copyenc.Zones {
	if t.zones == nil {
		return copyenc.UTC()
	}
	return t.zones
}
