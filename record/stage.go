package record

import (
	"fmt"
	"strconv"
	"time"
)

// Stage is one load stage of a run (run --stages): Users closed-loop users or Rate req/s, for
// Duration ns. Load.Stages lists a run's stages and Record.Stage indexes them.
type Stage struct {
	Users    int     `json:"users,omitempty"`
	Rate     float64 `json:"rate,omitempty"`
	Duration int64   `json:"duration"`
}

// String names the stage: "8 users × 2s" or "4 req/s × 30s".
func (s Stage) String() string {
	d := time.Duration(s.Duration)
	switch {
	case s.Users == 1:
		return fmt.Sprintf("1 user × %v", d)
	case s.Users > 0:
		return fmt.Sprintf("%d users × %v", s.Users, d)
	}
	return fmt.Sprintf("%s req/s × %v", strconv.FormatFloat(s.Rate, 'f', -1, 64), d) // digits: 1000000, not 1e+06
}
