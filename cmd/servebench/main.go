// Command servebench benchmarks LLM inference servers. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"servebench/internal/cli"
)

// main wires the two-stage stop: the first SIGINT/SIGTERM stops sending (in-flight requests
// finish within the grace period), the second cancels in-flight requests at once.
func main() {
	hard, cancelHard := context.WithCancel(context.Background())
	soft, cancelSoft := context.WithCancel(hard)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cancelSoft()
		<-sig
		cancelHard()
	}()
	code := cli.Main(cli.WithHardStop(soft, hard), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	cancelHard()
	os.Exit(code)
}
