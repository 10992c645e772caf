package metrics

import (
	"runtime"
	"runtime/debug"
	"testing"

	"servebench/record"
)

// benchRecords builds nrec completed records of nev content events each, one request sent
// every ms, with jittered gaps around 10 ms so that sorting does real work. Event j carries
// 1 + j%tokens tokens (tokens = 1: one token per event, the common stream).
func benchRecords(nrec, nev, tokens int) []record.Record {
	recs := make([]record.Record, nrec)
	for i := range recs {
		r := &recs[i]
		t0 := int64(i) * 1e6
		*r = record.Record{Phase: record.PhaseMeasure, Scheduled: t0, Dispatched: t0 + 1e4,
			Sent: t0 + 5e4, FirstEvent: t0 + 2e7, OutputTokensSource: record.SourceServer,
			PromptTokens: 512, PromptTokensSource: record.SourceServer, InputTokens: 512}
		r.Events = make([]record.Event, nev)
		for j := range r.Events {
			n := int32(1 + j%tokens)
			r.Events[j] = record.Event{T: t0 + 2e7 + int64(j)*1e7 + int64((i*7919+j*104729)%3_000_000), N: n}
			r.OutputTokens += int(n)
		}
		r.Done = r.Events[nev-1].T + 1e5
	}
	return recs
}

// BenchmarkAccumulator adds 10k records of 100 events each (1M events), then summarises.
// Besides time it reports the Accumulator's memory per content event: B/event-held is the
// live heap after every Add (before Summary), B/event-peak adds every byte Summary allocates
// (measured with the collector off, so it bounds Summary's peak from above).
//
//	go test -run '^$' -bench Accumulator -benchmem ./metrics
func BenchmarkAccumulator(b *testing.B) {
	for _, c := range []struct {
		name   string
		tokens int
	}{{"tokens=1", 1}, {"tokens=1-4", 4}} {
		b.Run(c.name, func(b *testing.B) {
			const nrec, nev = 10_000, 100
			recs := benchRecords(nrec, nev, c.tokens)
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
			held, peak := accumulatorBytes(recs)
			b.ReportMetric(float64(held)/(nrec*nev), "B/event-held")
			b.ReportMetric(float64(peak)/(nrec*nev), "B/event-peak")
		})
	}
}

// accumulatorBytes returns the live heap an Accumulator holds after adding recs, and that
// plus everything its Summary allocates (the collector is off meanwhile, so nothing is
// freed and the sum bounds the peak of Summary from above).
func accumulatorBytes(recs []record.Record) (held, peak uint64) {
	var m0, m1, m2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	var a Accumulator
	for i := range recs {
		a.Add(&recs[i])
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	old := debug.SetGCPercent(-1)
	_ = a.Summary()
	runtime.ReadMemStats(&m2)
	debug.SetGCPercent(old)
	runtime.KeepAlive(&a)
	runtime.KeepAlive(recs) // else the records, freed after the last Add, hide the Accumulator's growth
	held = m1.HeapAlloc - m0.HeapAlloc
	return held, held + (m2.TotalAlloc - m1.TotalAlloc)
}
