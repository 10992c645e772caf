package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// closedLoop builds n requests sent by users closed-loop users (each sends its next when its
// last ended, after think ns), the first users of them warmup; every failEvery-th fails
// mid-stream; turns > 0 makes each user's requests a session of that many turns, after
// which the user starts a new session.
func closedLoop(seed uint64, n, users, failEvery, turns int, think int64) []record.Record {
	rng := rand.New(rand.NewPCG(seed, 3))
	free := make([]int64, users)
	session := make([]int, users)
	turn := make([]int, users)
	nextSession := 1
	recs := make([]record.Record, 0, n)
	for i := range n {
		u := 0
		for k := range free { // the user free first sends next
			if free[k] < free[u] {
				u = k
			}
		}
		due := free[u] + 1e9
		r := record.Record{ID: i, Phase: record.PhaseMeasure, Scheduled: due, Dispatched: due + 1e5, Sent: due + 3e5 + rng.Int64N(1e6), Status: 200}
		if i < users {
			r.Phase = record.PhaseWarmup
		}
		if turns > 0 {
			if turn[u] == 0 || turn[u] == turns {
				session[u], turn[u] = nextSession, 0
				nextSession++
			}
			turn[u]++
			r.Session, r.Turn = session[u], turn[u]
		}
		r.Headers = r.Sent + 2e6
		t := r.Sent + int64(20e6+rng.Float64()*60e6)
		for range 10 + rng.IntN(50) {
			r.Events = append(r.Events, record.Event{T: t, N: 1})
			r.OutputTokens++
			t += int64(5e6 + rng.Float64()*10e6)
		}
		r.FirstEvent, r.Done = r.Events[0].T, t
		if failEvery > 0 && i%failEvery == failEvery-1 {
			r.ErrorClass, r.Error = record.ErrTruncated, "stream ended before [DONE]"
		}
		free[u] = r.Done + think - 1e9
		recs = append(recs, r)
	}
	return recs
}

func swimRun(recs []record.Record, label string) Run {
	h := header(true)
	var acc metrics.Accumulator
	acc.SetHeader(h)
	var se Series
	for i := range recs {
		acc.Add(&recs[i])
		se.Add(&recs[i])
	}
	return Run{Label: label, Header: h, Summary: acc.Summary(), Series: &se}
}

// TestPackLanes: a closed loop of N users packs onto exactly N lanes, whatever the lengths
// of its requests; sessions get a lane each, their turns in order; and an open loop's
// requests need as many lanes as were ever in flight at once.
func TestPackLanes(t *testing.T) {
	for _, users := range []int{1, 4, 16, 48} {
		set := &laneSet{}
		for _, r := range closedLoop(uint64(users), 600, users, 0, 0, 0) {
			set = set.add(&r)
		}
		if rows, _ := packLanes(set.reqs); len(rows) != users {
			t.Errorf("%d users packed onto %d lanes", users, len(rows))
		}
	}
	set := &laneSet{}
	sessions := map[int]bool{}
	for _, r := range closedLoop(7, 120, 6, 0, 5, 40e6) {
		set = set.add(&r)
		sessions[r.Session] = true
	}
	rows, how := packLanes(set.reqs)
	if len(rows) != 6 || !strings.Contains(how, fmt.Sprintf("%d sessions packed onto 6 lanes", len(sessions))) {
		t.Fatalf("6 users' sessions: %d lanes (%s), want 6", len(rows), how)
	}
	for _, row := range rows {
		seen := map[int]bool{}
		for k, i := range row.reqs {
			q := set.reqs[i]
			if k > 0 && set.reqs[row.reqs[k-1]].session == q.session {
				if prev := set.reqs[row.reqs[k-1]]; prev.turn+1 != q.turn {
					t.Fatalf("%s: session %d turn %d follows turn %d", row.label, q.session, q.turn, prev.turn)
				}
				continue
			}
			if seen[q.session] || q.turn != 1 {
				t.Fatalf("%s: session %d resumes at turn %d: its turns are not together", row.label, q.session, q.turn)
			}
			seen[q.session] = true
		}
	}
	// an open loop: request k due at k ms, lasting 10 ms, so at most 10 in flight at once
	var open []laneReq
	for k := range 200 {
		open = append(open, laneReq{id: k, due: int64(k+1) * 1e6, end: int64(k+11) * 1e6})
	}
	if rows, _ := packLanes(open); len(rows) != 10 {
		t.Errorf("open loop of 10 in flight packed onto %d lanes", len(rows))
	}
}

// TestLaneSetKeepsTheLastRun: a file of several runs draws its last, as its tables do; the
// cap keeps the first laneCap requests and counts the rest.
func TestLaneSetKeepsTheLastRun(t *testing.T) {
	var set *laneSet
	for run := range 3 {
		for _, r := range closedLoop(1, 50, 4, 0, 0, 0) {
			r.Run = run
			set = set.add(&r)
		}
	}
	if set.run != 2 || len(set.reqs) != 50 || set.seen != 50 {
		t.Errorf("kept run %d, %d of %d requests; want run 2, 50 of 50", set.run, len(set.reqs), set.seen)
	}
	set = nil
	for _, r := range closedLoop(1, laneCap+30, 64, 0, 0, 0) {
		set = set.add(&r)
	}
	if len(set.reqs) != laneCap || set.seen != laneCap+30 {
		t.Errorf("kept %d of %d, want %d of %d", len(set.reqs), set.seen, laneCap, laneCap+30)
	}
	note := swimlanePlots([]Run{{Series: &Series{lanes: set}}})[0].Note
	if !strings.Contains(note, fmt.Sprintf("the first %d of %d requests", laneCap, laneCap+30)) {
		t.Errorf("note %q does not say the chart is cut", note)
	}
}

var (
	laneSVGRE = regexp.MustCompile(`(?s)<svg class="lanes" id="([^"]+)" data-n="(\d+)" data-lanes="(\d+)".*?</svg>`)
	reqRE     = regexp.MustCompile(`<g class="req[^"]*"><title>`)
)

// TestSwimlaneInBrowser opens the page of a 1,000-request closed loop of 12 users in
// headless Chromium: no request, no console message, and in the rendered DOM the swim-lane
// chart: the whole run on 12 lanes with every request drawn, laneWindows zoomed stretches
// that together draw every request at least once, ten pages of 100 requests, the failed ones
// drawn as failed, and the switches between them. A screenshot of the chart alone is saved
// for a person to look at.
func TestSwimlaneInBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("skipping the browser test: %s not found (apt-get install chromium)", chromium)
	}
	recs := closedLoop(5, 1000, 12, 40, 0, 0)
	var page bytes.Buffer
	if err := HTMLRuns(&page, []Run{swimRun(recs, "loop")}); err != nil {
		t.Fatal(err)
	}
	dom, shot := openInChromium(t, "swimlane", page.Bytes())
	checkShot(t, shot)
	views := laneSVGRE.FindAllStringSubmatch(dom, -1)
	if len(views) != 1+laneWindows+10 {
		t.Fatalf("%d swim-lane views in the rendered page, want %d", len(views), 1+laneWindows+10)
	}
	zoomed := 0
	for k, v := range views {
		n, _ := strconv.Atoi(v[2])
		lanes, _ := strconv.Atoi(v[3])
		drawn := len(reqRE.FindAllString(v[0], -1))
		if drawn != n || n == 0 {
			t.Errorf("view %s says %d requests, draws %d", v[1], n, drawn)
		}
		switch {
		case k == 0:
			if v[1] != "sl0-all" || n != 1000 || lanes != 12 {
				t.Errorf("whole run: view %s draws %d requests on %d lanes, want sl0-all, 1000 on 12", v[1], n, lanes)
			}
			if f := strings.Count(v[0], `class="sl-f"`); f < 1000/40 {
				t.Errorf("whole run: %d failed bars for %d failed requests", f, 1000/40)
			}
		case k <= laneWindows:
			zoomed += n
		default:
			if n != 100 || lanes != 100 {
				t.Errorf("page %s draws %d requests on %d lanes, want 100 on 100", v[1], n, lanes)
			}
		}
	}
	if zoomed < 1000 || zoomed > 1000+laneWindows*12 {
		t.Errorf("the zoomed stretches draw %d requests, want every one once and the ones across an edge twice", zoomed)
	}
	for _, s := range []string{`id="sl0v-0" checked`, `id="sl0v-1"`, `id="sl0z-8"`, `id="sl0p-9"`, `#sl0p-9:checked~.sl0p-panes>div:nth-child(10){display:block}`} {
		if !strings.Contains(dom, s) {
			t.Errorf("rendered page lacks %s", s)
		}
	}
	// the chart alone, at the width of the page, for the screenshot
	i, j := bytes.Index(page.Bytes(), []byte(`<figure class="wide"><figcaption>Timeline`)), bytes.LastIndex(page.Bytes(), []byte(`</figure>`))
	head := page.Bytes()[:bytes.Index(page.Bytes(), []byte("<main>"))+len("<main>")]
	alone := append(append(append([]byte{}, head...), page.Bytes()[i:j]...), "</figure></main></body></html>"...)
	_, shot = openInChromium(t, "swimlane-alone", alone)
	checkShot(t, shot)
}

// TestSwimlaneSessions: on a session's lane the time between its turns is drawn, once per
// turn after the first; the per-request pages label each lane with its session and turn.
func TestSwimlaneSessions(t *testing.T) {
	recs := closedLoop(9, 60, 3, 0, 4, 80e6)
	var page bytes.Buffer
	if err := HTMLRuns(&page, []Run{swimRun(recs, "sessions")}); err != nil {
		t.Fatal(err)
	}
	whole := laneSVGRE.FindString(page.String())
	sessions := map[int]int{}
	for _, r := range recs {
		sessions[r.Session]++
	}
	gaps := 0
	for _, n := range sessions {
		gaps += n - 1
	}
	if got := strings.Count(whole, `class="sl-g"`); got != gaps {
		t.Errorf("%d gaps between turns drawn, want %d", got, gaps)
	}
	if !strings.Contains(page.String(), ">s2 t3</text>") || !strings.Contains(page.String(), "between turns (think or tool time)") {
		t.Error("the per-request view does not label lanes by session and turn, or the legend lacks the gaps")
	}
}

// From sent to the first token a request also waits in the server's queue: the chart's
// legend and tooltips call that phase the server's queue and prefill, never "prefill" alone,
// and the client's own delay its client queue.
func TestSwimlanePhaseWords(t *testing.T) {
	var page bytes.Buffer
	if err := HTMLRuns(&page, []Run{swimRun(closedLoop(4, 30, 3, 0, 0, 0), "words")}); err != nil {
		t.Fatal(err)
	}
	lanes := page.String()[strings.Index(page.String(), `<div class="sl" `):]
	for _, want := range []string{"server queue + prefill (sent → first token; tick: headers)", "client queue (due → sent)", "; server queue + prefill "} {
		if !strings.Contains(lanes, want) {
			t.Errorf("the swim-lane chart lacks %q", want)
		}
	}
	if regexp.MustCompile(`[;>] ?prefill`).MatchString(lanes) {
		t.Error(`the swim-lane chart still calls a phase "prefill" alone`)
	}
}
