// Command pgts makes stock PostgreSQL a time-series store. See the README
// and `pgts --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/pgts/pgts/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.NewRoot(cli.OSEnv()).ExecuteContext(ctx)
	stop()
	if code, ok := cli.ExitStatus(err); ok {
		os.Exit(code)
	}
	code := cli.ExitCode(ctx, err)
	if err != nil {
		if code == 130 {
			fmt.Fprintln(os.Stderr, "pgts: interrupted")
		} else {
			fmt.Fprintln(os.Stderr, "pgts:", err)
		}
	}
	os.Exit(code)
}
