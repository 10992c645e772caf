package compare

// Outlier is a run left out of a row as disturbed: no rule leaves one out since
// compare-2026.12.2 (Row.Outliers).
type Outlier struct {
	Side string  // "base" or "candidate"
	Run  int     // the run's index in its file
	Dev  float64 // its value over the geometric mean of the side's other runs, − 1
}
