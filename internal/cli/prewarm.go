package cli

import (
	"context"
	"time"

	"servebench/client"
	"servebench/load"
)

// prewarm opens the connections of a run before it starts, when --prewarm-connections asks:
// one per closed-loop user or per --max-concurrency slot, 64 for an uncapped open loop. The
// requests then find their connections ready, so connection set-up (recorded per request as
// Record.Connect when it happens) stays out of TTFT. It reports whether it ran.
func (b *bench) prewarm(ctx context.Context, lc load.Config) bool {
	if !b.cfg.Prewarm {
		return false
	}
	n := max(lc.Concurrency, lc.MaxConcurrency)
	if n == 0 {
		n = 64
	}
	start := time.Now()
	opened := client.Prewarm(ctx, b.target, n)
	b.logf("prewarm: %d of %d connections opened in %v", opened, n, time.Since(start).Round(time.Millisecond))
	return true
}
