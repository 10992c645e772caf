package record

import (
	"errors"
	"io"
)

// ReadAll reads a whole records file from r: its header (with the run-end, sweep-end and
// telemetry lines gathered into it) and every record, in file order. Each record is decoded
// into a fresh value, so none shares its Events with another. It stops at the first error
// other than io.EOF and returns it with the header and the records before it: a *LineError
// for a line that is not a valid record (the cut last line of an interrupted run), a
// *RunError for a file that is not one run, ErrNoHeader when r has no header (and then a nil
// header). For files too large to hold, read them with NewReader, one record at a time.
func ReadAll(r io.Reader) (*Header, []Record, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	var recs []Record
	for {
		var rec Record
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			return rd.Header(), recs, nil
		}
		if err != nil {
			return rd.Header(), recs, err
		}
		recs = append(recs, rec)
	}
}
