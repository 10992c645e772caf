// Package metrics computes every figure servebench reports from records, and nothing else.
//
// The definitions are those of docs/design/METRICS.md (docs/metrics.md for users); each is quoted in a
// doc comment next to the code that computes it. Percentiles are exact (Hyndman–Fan type 7,
// numpy's default), standard deviations are population (ddof=0, as numpy and vLLM), failed
// requests never enter a latency distribution, and warmup records never enter statistics.
//
// Use an Accumulator: Add each record, then call Summary. Package metrics imports only record.
package metrics
