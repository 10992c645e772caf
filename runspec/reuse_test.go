package runspec

import (
	"strings"
	"testing"
)

// TestReusePrefix: the prefix that gives a share, (n−g)·P/(n·in) = share, and the shares no
// prefix can give.
func TestReusePrefix(t *testing.T) {
	for _, c := range []struct {
		share            float64
		groups, n, in, p int
		err              string
	}{
		{0.5, 1, 40, 256, 131, ""}, // 39·131/(40·256) = 49.9%
		{0.9, 1, 40, 256, 236, ""}, // 89.9%
		{0.5, 4, 40, 256, 142, ""}, // 36·142/(40·256) = 49.9%
		{0.99, 1, 40, 256, 0, "at most 97.1%"},
		{0.5, 3, 3, 256, 0, "more --requests"},
		{0.001, 1, 10, 100, 0, "at least"},
	} {
		_, p, err := reusePrefix(c.share, c.groups, c.n, c.in)
		if p != c.p || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("reusePrefix(%v, %d, %d, %d) = %d, %v; want %d, %q", c.share, c.groups, c.n, c.in, p, err, c.p, c.err)
		}
	}
}
