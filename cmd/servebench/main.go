// Command servebench benchmarks LLM inference servers. See README.md.
package main

import (
	"os"

	"servebench/internal/cli"
)

// main wires the two-stage stop (cli.StopOnSignals): the first SIGINT/SIGTERM stops sending
// (in-flight requests finish within the grace period), the second cancels in-flight requests
// at once.
func main() {
	ctx, release := cli.StopOnSignals()
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	release()
	os.Exit(code)
}
