package metrics

import (
	"testing"

	"servebench/record"
)

// BenchmarkAccumulator adds 10k records of 100 events each (1M events), then summarises.
//
//	go test -run '^$' -bench Accumulator -benchmem ./metrics
func BenchmarkAccumulator(b *testing.B) {
	const nrec, nev = 10_000, 100
	recs := make([]record.Record, nrec)
	for i := range recs {
		r := &recs[i]
		t0 := int64(i) * 1e6 // one request sent every ms
		*r = record.Record{Phase: record.PhaseMeasure, Scheduled: t0, Dispatched: t0 + 1e4,
			Sent: t0 + 5e4, FirstEvent: t0 + 2e7, OutputTokens: nev, OutputTokensSource: record.SourceServer,
			PromptTokens: 512, PromptTokensSource: record.SourceServer, InputTokens: 512}
		r.Events = make([]record.Event, nev)
		for j := range r.Events {
			// jittered gaps around 10 ms so that sorting does real work
			r.Events[j] = record.Event{T: t0 + 2e7 + int64(j)*1e7 + int64((i*7919+j*104729)%3_000_000), N: 1}
		}
		r.Done = r.Events[nev-1].T + 1e5
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var a Accumulator
		for i := range recs {
			a.Add(&recs[i])
		}
		_ = a.Summary()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(nrec*nev), "ns/event")
}
