package catalog

// rraFillMigration leaves room on each page of pgts.rra_data for the
// next version of its row, so that the flush's updates of archive rows
// are HOT (heap-only tuples): a packed row is about 3.2 KB, and at the
// default fillfactor two filled a page, so that every update put the new
// version on another page, with a new entry in the primary key's index
// and a dead row behind (after a load, 811 MB of table for 56 MB of live
// rows). At fillfactor 50 an insert leaves a page at one row; an update
// writes the new version beside the old one, which the next update of
// the row prunes on the page. The table takes a page per row (twice the
// live rows' size) and stays there. Pages written before keep their rows
// until those are updated (each moves once, to a page with room) or the
// table is rewritten (VACUUM FULL). Self-contained and idempotent.
const rraFillMigration = `ALTER TABLE pgts.rra_data SET (fillfactor = 50);`
