//go:build race

package metrics

// raceEnabled: the race detector slows the recorded sets' judgement about tenfold, so
// TestRecordedSteadyRates judges them once, without the ablation.
const raceEnabled = true
