// Package stat holds servebench's pure statistical methods: functions of numbers, with no
// I/O, no clock and no knowledge of records. Each method names its source, and each verdict
// built on one (steady, warm, changed) quotes the false-alarm and detection rates measured
// for it over runs that are steady or changing by construction (docs/metrics.md; the
// validation matrix in package vtime).
//
//   - MannKendall: a distribution-free trend test (Mann 1945, Kendall 1975), with the
//     variance corrected for serial correlation (Yue & Wang 2004) and Sen's slope (Sen 1968).
//   - MSER: the initial-transient truncation point by the Marginal Standard Error Rule
//     (White 1997; MSER-5 of White, Cobb & Spratt 2000).
//   - Median, Mean and MedianSorted: small helpers the others share.
package stat
