package copyenc

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ReadServerZones runs AbbrevsSQL and NamesSQL.
func ReadServerZones(ctx context.Context, conn *pgx.Conn) ([]Abbrev, []string, error) {
	rows, err := conn.Query(ctx, AbbrevsSQL)
	if err != nil {
		return nil, nil, err
	}
	abbrevs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Abbrev, error) {
		var a Abbrev
		err := r.Scan(&a.Name, &a.Offset, &a.IsDST, &a.Dynamic)
		return a, err
	})
	if err != nil {
		return nil, nil, err
	}
	rows, err = conn.Query(ctx, NamesSQL)
	if err != nil {
		return nil, nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return abbrevs, names, err
}
