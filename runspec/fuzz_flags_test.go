package runspec

import (
	"math"
	"strings"
	"testing"
	"time"

	"servebench/workload"
)

// checkUsageLine fails t when err is not nil and is not a one-line usage error.
func checkUsageLine(t *testing.T, err error) {
	t.Helper()
	if err != nil && (!IsUsage(err) || strings.ContainsAny(err.Error(), "\r\n")) {
		t.Fatalf("not a one-line usage error: %q", err)
	}
}

// FuzzStages: no --stages value panics, every refusal is a one-line usage error, and an
// accepted list is bounded: at most MaxStages stages of 1 to MaxCount users or a finite
// positive rate, each of a positive duration, a year at most in all.
func FuzzStages(f *testing.F) {
	for _, s := range []string{"8x60s,32x60s,64x60s", "2rpsx30s, 8/s x 30s", "100000000x1s", "1e308rpsx1s",
		"8x60s,2rpsx1s", "x", ",", "0x1s", "8x-1s", "NaNrpsx1s", strings.Repeat("1x1s,", 1001)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		sts, err := ParseStages(v)
		checkUsageLine(t, err)
		if err != nil {
			return
		}
		if len(sts) == 0 || len(sts) > MaxStages {
			t.Fatalf("%d stages", len(sts))
		}
		var total time.Duration
		for _, st := range sts {
			total += time.Duration(st.Duration)
			users := st.Users >= 1 && st.Users <= MaxCount && st.Rate == 0
			rate := st.Users == 0 && st.Rate > 0 && !math.IsInf(st.Rate, 0)
			if !(users || rate) || st.Duration <= 0 {
				t.Fatalf("stage %+v", st)
			}
		}
		if total <= 0 || total > 24*365*time.Hour {
			t.Fatalf("stages last %v", total)
		}
	})
}

// FuzzMedia: no --images or --audio value panics, every refusal is a one-line usage error
// naming its flag, and an accepted plan keeps every bound: items, pixels, audio per request,
// and the media a run holds at once (per request times the users in flight).
func FuzzMedia(f *testing.F) {
	for _, c := range []struct {
		images, audio string
		users         int
	}{{"2x1024x1024", "5s", 16}, {"", "64x10m", 1}, {"8192x8192", "", 64}, {"1x1", "2x5m", 1}, {"65x64x64", "1ms", 1},
		{"2xfoo", "", 1}, {"3", "0s", 1}, {"1x99999999999999999999x1", "", 1}, {"", "1x9223372036854775807ns", 1}} {
		f.Add(c.images, c.audio, c.users)
	}
	f.Fuzz(func(t *testing.T, images, audio string, users int) {
		s := Default()
		s.Images, s.Audio, s.Concurrency = images, audio, users
		p, err := s.MediaPlan()
		checkUsageLine(t, err)
		if err != nil {
			if !strings.Contains(err.Error(), "--image") && !strings.Contains(err.Error(), "--audio") {
				t.Fatalf("names no flag: %v", err)
			}
			return
		}
		if p.Images+p.Audio > workload.MaxMediaItems || p.Images*p.Width*p.Height > workload.MaxRequestPixels ||
			int64(p.Audio)*p.AudioMS > workload.MaxRequestAudioMS {
			t.Fatalf("plan past a per-request bound: %+v", p)
		}
		per := workload.RequestMediaBytes(p.Images, p.Width, p.Height, p.Audio, p.AudioMS)
		if users > 0 && float64(per)*float64(users) > workload.MaxRunMediaBytes {
			t.Fatalf("%d users × %d bytes of media each accepted", users, per)
		}
	})
}
