package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// StopOnSignals wires the process's two-stage stop: the first SIGINT/SIGTERM cancels the
// returned context (the soft stop: sending stops, in-flight requests finish within the grace
// period), the second cancels in-flight requests at once (the hard stop, see WithHardStop).
// release stops listening and cancels both; call it when Main has returned. The command and
// the tests' re-executed binary both run through it, so the tests signal the real wiring.
func StopOnSignals() (ctx context.Context, release func()) {
	hard, cancelHard := context.WithCancel(context.Background())
	soft, cancelSoft := context.WithCancel(hard)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sig:
		case <-hard.Done():
			return
		}
		cancelSoft()
		select {
		case <-sig:
		case <-hard.Done():
		}
		cancelHard()
	}()
	return WithHardStop(soft, hard), func() {
		signal.Stop(sig)
		cancelHard()
	}
}
