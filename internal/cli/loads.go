package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/copyload"
)

func newLoadsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "loads",
		Short: "List resumable loads (--load-id) and abandon interrupted ones",
		Long: `A load run with --load-id (and every --bulk load) keeps a ledger: one row
per committed batch, so that rerunning the same command resumes it exactly.
'pgts loads list' shows those ledgers; 'pgts loads abandon ID' gives up an
interrupted load.`,
	}
	cmd.AddCommand(newLoadsListCmd(a), newLoadsAbandonCmd(a))
	return cmd
}

func newLoadsListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the loads with a ledger: state, batches and rows committed, partitions not attached yet",
		Long: `List the loads with a ledger, the newest first. STATE is running (a run
holds the load's lock now), done, or interrupted (a rerun of the same
command resumes it). PENDING counts the partitions an interrupted --bulk
load filled but has not attached: their rows are not visible until the
load completes (or 'pgts loads abandon' drops them).`,
		Example: "  pgts loads list\n  pgts loads list --json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, _, err := a.manager(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			loads, err := copyload.Loads(ctx, pool)
			if err != nil {
				return err
			}
			if asJSON {
				if loads == nil {
					loads = []copyload.LoadInfo{}
				}
				return writeJSON(a, loads)
			}
			tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LOAD ID\tTABLE\tSTATE\tSTARTED\tBATCHES\tROWS\tREJECTED\tPENDING")
			for _, l := range loads {
				state := "interrupted"
				switch {
				case l.Running:
					state = "running"
				case l.FinishedAt != nil:
					state = "done"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", l.LoadID, l.Target, state, l.StartedAt.UTC().Format(time.RFC3339),
					commas(l.Batches), commas(l.Rows), commas(l.Rejected), l.Pending)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newLoadsAbandonCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "abandon LOAD_ID",
		Short: "Give up an interrupted load: drop its unattached partitions and delete its ledger",
		Long: `Give up an interrupted load. In one transaction, the partitions its --bulk
path filled but never attached are dropped (their rows were never visible)
and its ledger is deleted, so that the load ID starts afresh and other
loads may write the time ranges those partitions held.

Rows the load committed into attached partitions stay: abandoning removes
nothing anyone could already see. A load that is running is refused: stop
it first.`,
		Example: "  pgts loads abandon nightly-2024-05-01",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, _, err := a.manager(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			got, err := copyload.Abandon(ctx, pool, args[0])
			if errors.Is(err, copyload.ErrNoSuchLoad) {
				return usagef("%v", err)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a, got)
			}
			fmt.Fprintf(a.env.Stdout, "abandoned load %q", got.LoadID)
			if got.Target != "" {
				fmt.Fprintf(a.env.Stdout, " into %s", got.Target)
			}
			fmt.Fprintf(a.env.Stdout, ": ledger of %s %s deleted", commas(got.Batches), plural(got.Batches, "batch", "batches"))
			if n := int64(len(got.Partitions)); n > 0 {
				fmt.Fprintf(a.env.Stdout, "; %d unattached %s dropped (%s rows never visible: %s)", n, plural(n, "partition", "partitions"),
					commas(got.Rows), strings.Join(got.Partitions, ", "))
			}
			fmt.Fprintln(a.env.Stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
