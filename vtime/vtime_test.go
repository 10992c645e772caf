package vtime

import (
	"bytes"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/record"
	"servebench/sim"
)

func TestClosedLoopRecords(t *testing.T) {
	c := sim.DefaultConfig()
	start := time.Now()
	res, err := Run(t, c, Load{Users: 16, Requests: 200, Warmup: 16, InputTokens: 512, OutputTokens: 128})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("200+16 requests × 128 tokens in %v of real time", time.Since(start))
	if len(res.Records) != 216 {
		t.Fatalf("%d records", len(res.Records))
	}
	var buf bytes.Buffer
	if err := res.Write(&buf); err != nil {
		t.Fatal(err)
	}
	h, recs, err := record.ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	a := metrics.NewAccumulator(metrics.Options{})
	a.SetHeader(h)
	for i := range recs {
		a.Add(&recs[i])
	}
	s := a.Summary()
	if s.Completed != 200 || s.WarmupDiscarded != 16 || !s.TTFT.Valid() || s.MaxInFlight != 16 {
		t.Fatalf("summary: completed %d warmup %d", s.Completed, s.WarmupDiscarded)
	}
	t.Logf("TTFT p50 %.1f ms, ITL p50 %.2f ms, %.0f tok/s", s.TTFT.Median, s.ITLChunk.Median, *s.OutputThroughput)
}
