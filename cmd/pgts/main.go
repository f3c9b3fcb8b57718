// Command pgts makes stock PostgreSQL a time-series store. See the README
// and `pgts --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/pgts/pgts/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile()
	err := cli.NewRoot(cli.OSEnv()).ExecuteContext(ctx)
	stopProfile()
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

// startProfile writes a CPU profile of the whole run to the file named by
// PGTS_CPU_PROFILE, for `go tool pprof`; it does nothing when unset.
func startProfile() (stop func()) {
	path := os.Getenv("PGTS_CPU_PROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgts: PGTS_CPU_PROFILE:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
