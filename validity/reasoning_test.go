package validity

import (
	"testing"
	"time"
)

// TestParseLimitsTTFO accepts ttfo (and ttfat) as a percentile rule on the time to first
// output token.
func TestParseLimitsTTFO(t *testing.T) {
	ls, err := ParseLimits([]string{"ttfo=2s@p99,ttfat=1s@p90"})
	if err != nil || len(ls) != 2 || ls[0].Metric != "ttfo" || ls[1].Metric != "ttfo" || ls[0].Max != 2*time.Second {
		t.Errorf("limits %+v, %v", ls, err)
	}
}
