package bench

import (
	"context"

	"servebench/runspec"
	"servebench/workload"
)

// lengthDists is the spec's length distributions for a synthetic workload (nil: the fixed
// lengths), a --lengths file read in one bounded, cancellable pass. The drawn lengths are
// in every request, so the workload hash and the embedded prompts cover them, and --like
// replays them; the header's config keeps the spec.
func (b *Session) lengthDists(ctx context.Context) (*workload.Lengths, error) {
	l, file, err := b.spec.LengthDists()
	if err != nil || file == "" {
		return l, err
	}
	in, err := b.openInput(ctx, "--lengths", file)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if l.Pairs, err = workload.ReadPairs(in, file); err != nil {
		if ctx.Err() != nil {
			return nil, b.inputErr("--lengths", ctx.Err())
		}
		return nil, runspec.Usagef("--lengths: %v", err)
	}
	return l, nil
}
