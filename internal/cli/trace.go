package cli

import (
	"context"
	"fmt"

	"servebench/workload"
)

// traceWorkload builds one request per trace arrival. Arrivals without lengths take
// --input-tokens and --output-tokens; arrivals with lengths get prompts of exactly that many
// tokens (when the server can tokenize), built per distinct length pair with a seed derived
// from --seed so the workload, and its hash, are reproducible.
func (b *bench) traceWorkload(ctx context.Context) ([]workload.Request, bool, error) {
	cfg := b.cfg
	type pair struct{ in, out int }
	groups := map[pair][]int{}
	var order []pair
	for i, a := range b.arrivals {
		p := pair{cfg.InputTokens, cfg.OutputTokens}
		if a.InputTokens > 0 {
			p.in = a.InputTokens
		}
		if a.OutputTokens > 0 {
			p.out = a.OutputTokens
		}
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], i)
	}
	tok, err := b.promptTokenizer(ctx) // backends.go
	if err != nil {
		return nil, false, err
	}
	reqs := make([]workload.Request, len(b.arrivals))
	exact := true
	for gi, p := range order {
		syn := workload.Synthetic{Count: len(groups[p]), InputTokens: p.in, OutputTokens: p.out,
			RangeRatio: cfg.RangeRatio, Seed: cfg.Seed + int64(gi), Chat: chatAPI(cfg.API)}
		if err := syn.Validate(); err != nil {
			return nil, false, codeErr(ExitUsage, fmt.Errorf("--trace: %w", err))
		}
		rs, ex, err := syn.Generate(ctx, tok)
		if err != nil {
			return nil, false, fmt.Errorf("build workload: %s", redactSecret(err.Error(), cfg.APIKey))
		}
		exact = exact && ex
		for k, i := range groups[p] {
			reqs[i] = rs[k]
			reqs[i].ID = i
		}
	}
	b.logf("built %d prompts for the trace's arrivals (%d distinct lengths)", len(reqs), len(order))
	return reqs, exact, nil
}
