// Package stat holds servebench's pure statistical methods: functions of numbers, with no
// I/O, no clock and no knowledge of records. Each method names its source, and each verdict
// built on one (steady, warm, changed) quotes the false-alarm and detection rates measured
// for it over runs that are steady or changing by construction (docs/metrics.md; the
// validation matrix in package vtime).
//
//   - MannKendall: a distribution-free trend test (Mann 1945, Kendall 1975), with the
//     variance corrected for serial correlation (Yue & Wang 2004) and Sen's slope (Sen 1968).
//   - ShiftTest: one step in a series' level at an unknown point (segment medians, noise
//     from successive differences and residual spread, Bonferroni over the splits).
//   - MSER: the initial-transient truncation point by the Marginal Standard Error Rule
//     (White 1997; MSER-5 of White, Cobb & Spratt 2000). Not used by a verdict yet: it needs
//     the series to be half past its transient before it can say so, later than
//     WarmupJudge stops.
//   - WarmupJudge: when a warmup has stopped moving (--warmup auto), fed by the load runner,
//     live or in virtual time (package vtime).
//   - Median, Mean and MedianSorted: small helpers the others share.
package stat
