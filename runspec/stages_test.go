package runspec

import (
	"testing"
	"time"

	"servebench/record"
)

func TestParseStages(t *testing.T) {
	for in, want := range map[string][]record.Stage{
		"8x60s,32x60s,64x60s":  {{Users: 8, Duration: int64(time.Minute)}, {Users: 32, Duration: int64(time.Minute)}, {Users: 64, Duration: int64(time.Minute)}},
		"2rps x 30s, 8/s x 1m": {{Rate: 2, Duration: int64(30 * time.Second)}, {Rate: 8, Duration: int64(time.Minute)}},
		"0.5rpsx1s":            {{Rate: 0.5, Duration: int64(time.Second)}},
	} {
		got, err := ParseStages(in)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %v, %v", in, got, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%q stage %d: %+v, want %+v", in, i, got[i], want[i])
			}
		}
	}
	for _, bad := range []string{"", "8", "x1s", "8x", "8x-1s", "0x1s", "8x1s,", "2rpsx1s,8x1s", "NaNrpsx1s", "Infrpsx1s", "0rpsx1s", "8.5x1s", "200000000x1s", "8x100000h"} {
		if _, err := ParseStages(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestResolveStages(t *testing.T) {
	s := Default()
	s.Stages = "8x1s,32x2s,4x1s"
	s.MarkSet("stages")
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	r := s.Resolve()
	if r.Duration != 4*time.Second || r.Concurrency != 32 || r.Warmup != 8 || r.Requests != 0 || r.OpenLoop() {
		t.Errorf("resolved duration %v, concurrency %d, warmup %d, requests %d, open %v", r.Duration, r.Concurrency, r.Warmup, r.Requests, r.OpenLoop())
	}
	s.Stages = "4rpsx1s"
	if r := s.Resolve(); !r.OpenLoop() || r.Concurrency != 0 || r.Warmup != 4 {
		t.Errorf("rate stages: open %v, concurrency %d, warmup %d", r.OpenLoop(), r.Concurrency, r.Warmup)
	}
}
