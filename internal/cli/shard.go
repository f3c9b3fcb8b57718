package cli

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/shard"
)

func newShardCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "shard",
		Short: "Add, list and remove shard servers of this (coordinator) database; move partitions between them",
		Long: `Shards are other PostgreSQL servers (14 or newer, postgres_fdw is the only
extension needed, on the coordinator) that hold the partitions of sharded
series tables (pgts table create --shard-by). This database is the
coordinator: users query it, and it reaches the shards through postgres_fdw
(one foreign server per shard, async_capable, fetch_size 10000, and a user
mapping for the current user holding the shard's user and password).
The loader connects to the shards directly with the same credentials.

Passwords are never printed or logged. Give the URL as - to read it from
stdin, so that it does not show in the process list.

See docs/scale-out.md.`,
	}
	cmd.AddCommand(newShardAddCmd(a), newShardListCmd(a), newShardRemoveCmd(a), newShardMoveCmd(a))
	return cmd
}

func newShardAddCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "add NAME URL",
		Short: "Record a shard server (checks that it answers and installs pgts' catalog there)",
		Long: `Record the shard NAME at URL: connect to it (it must answer), install
pgts' catalog there, and create on the coordinator the postgres_fdw server
pgts_shard_NAME and the current user's user mapping; then check that the
coordinator's server reaches the shard through them (the URL's host must be
one the coordinator's server can reach). Adding a NAME again updates its
address and credentials.`,
		Example: `  pgts shard add a postgresql://pgts:secret@10.0.0.11:5432/metrics
  echo "$SHARD_B_URL" | pgts shard add b -`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			url := args[1]
			if url == "-" {
				line, err := bufio.NewReader(a.env.Stdin).ReadString('\n')
				if err != nil && line == "" {
					return usagef("reading the shard URL from stdin: %v", err)
				}
				url = strings.TrimSpace(line)
			}
			pool, err := a.openDB(ctx, 2)
			if err != nil {
				return err
			}
			defer pool.Close()
			s, err := shard.New(pool, a.log).Add(ctx, args[0], url)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.env.Stdout, "shard %s added: %s (foreign server %s)\n", s.Name, s.Address(), s.Server)
			return nil
		},
	}
}

func newShardListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the shard servers (without passwords)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, err := a.openDB(ctx, 2)
			if err != nil {
				return err
			}
			defer pool.Close()
			c := shard.New(pool, a.log)
			shards, err := c.List(ctx)
			if err != nil {
				return err
			}
			tables, err := c.Tables(ctx)
			if err != nil {
				return err
			}
			type row struct {
				Name       string `json:"name"`
				Server     string `json:"server"`
				Address    string `json:"address"`
				Partitions int    `json:"partitions"`
			}
			out := []row{}
			for _, s := range shards {
				r := row{Name: s.Name, Server: s.Server, Address: s.Address()}
				for _, t := range tables {
					for _, p := range t.Placement {
						if p == s.Name {
							r.Partitions++
						}
					}
				}
				out = append(out, r)
			}
			if asJSON {
				return writeJSON(a, out)
			}
			tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SHARD\tFOREIGN SERVER\tADDRESS\tPARTITIONS")
			for _, r := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", r.Name, r.Server, r.Address, r.Partitions)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newShardRemoveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Forget a shard that holds no partitions (its data and catalog are left alone)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, err := a.openDB(ctx, 2)
			if err != nil {
				return err
			}
			defer pool.Close()
			if err := shard.New(pool, a.log).Remove(ctx, args[0]); err != nil {
				return err
			}
			a.log.Info("shard removed", "shard", args[0])
			return nil
		},
	}
}

// maintainShards runs maintenance on every shard of the coordinator, when
// it has any; it returns how many shards failed.
func maintainShards(ctx context.Context, a *app) (int, error) {
	pool, err := a.openDB(ctx, 2)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	c := shard.New(pool, a.log)
	shards, err := c.List(ctx)
	if err != nil || len(shards) == 0 {
		return 0, err
	}
	res, err := c.Maintain(ctx, time.Now)
	failed := 0
	for _, r := range res {
		if r.Failed() {
			failed++
			continue
		}
		created, dropped := 0, 0
		for _, t := range r.Results {
			created += t.Created
			dropped += len(t.Dropped)
		}
		a.log.Info("maintained shard", "shard", r.Shard, "tables", len(r.Results), "created", created, "dropped", dropped)
	}
	return failed, err
}

func newShardMoveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "move TABLE PARTITION SHARD",
		Short: "Move one hash partition of a sharded table to another shard (rebalance)",
		Long: `Move partition PARTITION (0 to N-1; pgts table show TABLE lists them by
shard) of the sharded table TABLE, whole, to shard SHARD: its rows and its
load ledgers are copied to the new shard in one transaction while the old
copy is locked against writes (reads go on), the coordinator's foreign table is
switched to the new shard, and the old copy is dropped. Writers that
waited on the old copy fail; rerunning their load (same --load-id) resumes
on the new shard without loading a row twice. A move that stops half-way
is finished by running the same command again; until then the old shard
serves the partition. Best run while no load writes the table.`,
		Example: "  pgts shard move conditions 5 d",
		Args:    exactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			part, err := strconv.Atoi(args[1])
			if err != nil {
				return usagef("partition %q: a number from 0", args[1])
			}
			pool, err := a.openDB(ctx, 2)
			if err != nil {
				return err
			}
			defer pool.Close()
			res, err := shard.New(pool, a.log).Move(ctx, args[0], part, args[2], time.Now)
			if err != nil {
				return err
			}
			if res.AlreadyThere {
				fmt.Fprintf(a.env.Stdout, "partition %d of %s is already on shard %s\n", res.Partition, res.Table, res.To)
				return nil
			}
			fmt.Fprintf(a.env.Stdout, "moved partition %d of %s from shard %s to %s: %s rows, %d load ledgers\n",
				res.Partition, res.Table, res.From, res.To, commas(res.Rows), res.Ledgers)
			return nil
		},
	}
}
