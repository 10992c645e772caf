package report

import (
	"cmp"
	"container/heap"
	"fmt"
	"html"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"servebench/record"
)

// The swim-lane chart draws every request of a run on the run's time axis, one bar per
// request split into its phases:
//
//	queue    due → sent: the client's own delay (lateness of the sender, connection set-up,
//	         writing the request), where a concurrency cap or a late open loop hides latency
//	server queue + prefill  sent → first content event: the server's own queue and its
//	         prefill, which the client cannot tell apart (a tick marks the response headers;
//	         llama.cpp sends them when a slot takes the request)
//	decode   first content event → end of the stream
//
// A failed request is one red bar from its send to its failure. On a session's lane the gap
// between one turn's end and the next turn's due time is drawn as a thin line: the user's
// think time, or in an agent loop the tool's time, which is exactly that gap.
//
// Thousands of requests stay readable in two views, switched without script (the page's
// Content-Security-Policy forbids any, so the switches are radio buttons and CSS):
// requests packed onto lanes (one lane per session, or a loop's users: interval
// partitioning puts N users' requests on N lanes), the whole run or one of laneWindows
// equal stretches of it; and one lane per request, lanePage requests a page, each page on
// its own time axis. Hovering a bar shows its request's figures (an SVG title).

// Limits of the chart: beyond laneCap requests of a run the first laneCap in file order are
// drawn (the note says so), and the per-request view pages at most lanePagesMax pages.
const (
	laneCap      = 5_000
	lanePage     = 100
	lanePagesMax = 40
	laneWindows  = 8
	laneLabelW   = 78.0 // left margin for lane labels
	laneTop      = 6.0
	laneBottom   = 34.0
)

// laneReq is what the chart keeps of one request: its phase boundaries (ns since t0; 0 is
// "did not happen") and what its tooltip says.
type laneReq struct {
	id, session, turn  int
	due, sent, headers int64
	first, end         int64 // first content event, end of the request
	tokens             int
	errClass           string
	measured           bool
	trace              string
	// srv are the server's own phases from its span joined by trace id (spans.go): nil
	// when the request has none
	srv *srvPhases
}

// laneSet keeps the requests of a file's last run (the one its tables show): a later run's
// first record starts the set afresh.
type laneSet struct {
	run  int
	reqs []laneReq
	seen int // the run's requests, drawn or not
}

// add adds r and returns the set (a new one when l is nil), so that a Series needs one line
// for it.
func (l *laneSet) add(r *record.Record) *laneSet {
	if l == nil {
		l = &laneSet{run: r.Run}
	}
	switch {
	case r.Run < l.run:
		return l
	case r.Run > l.run:
		*l = laneSet{run: r.Run}
	}
	q, ok := laneOf(r)
	if !ok {
		return l
	}
	l.seen++
	if len(l.reqs) < laneCap {
		l.reqs = append(l.reqs, q)
	}
	return l
}

// laneOf returns r's phases, or false when it has no time span at all.
func laneOf(r *record.Record) (laneReq, bool) {
	q := laneReq{id: r.ID, session: r.Session, turn: r.Turn, due: r.Scheduled, sent: r.Sent,
		headers: r.Headers, tokens: r.OutputTokens, errClass: r.ErrorClass, measured: r.Measured(), trace: r.TraceID}
	if q.due <= 0 {
		q.due = r.Dispatched
	}
	if len(r.Events) > 0 {
		q.first = r.Events[0].T
	}
	q.end = r.Done
	if n := len(r.Events); n > 0 {
		q.end = max(q.end, r.Events[n-1].T)
	}
	if q.end <= 0 {
		q.end = max(r.Headers, r.Sent, r.Dispatched)
	}
	if q.due <= 0 || q.end < q.due {
		return q, false
	}
	return q, true
}

// Kinds of drawn segment, each with its CSS class and legend words.
const (
	segQueue = iota
	segPrefill
	segDecode
	// with the server's span joined, sent → first token is drawn as the server saw it:
	segNet        // before the server saw it, and after its first token until ours
	segSrvQueue   // the server's queue
	segSrvPrefill // the server's prefill (and the rest of its TTFT)
)

var (
	segClass = [...]string{"sl-q", "sl-p", "sl-d", "sl-n", "sl-sq", "sl-p"}
	// segName names the OTLP spans (otlp.go), which tracing tools key on.
	segName = [...]string{"queue", "prefill", "decode", "network", "server queue", "server prefill"}
	// segWords are the phases in the chart's legend and tooltips: from sent to the first
	// token a request also waits in the server's queue, and a loaded server's long "prefill"
	// bars were its queue — unless the server's span tells them apart.
	segWords = [...]string{"client queue", "server queue + prefill", "decode", "network / gateway",
		"server queue", "server prefill"}
)

type seg struct {
	kind int
	a, b int64
}

// segs returns q's phases in time order: queue (when it was sent after its due time),
// prefill, and decode (when a content event came). A failed request has the same phases; its
// drawing colours them as failed.
func (q *laneReq) segs() []seg {
	var out []seg
	start := q.due
	if q.sent > 0 {
		if q.sent > q.due {
			out = append(out, seg{segQueue, q.due, q.sent})
		}
		start = q.sent
	}
	switch {
	case q.first > 0 && q.first >= start && q.first <= q.end && q.srv != nil && q.sent > 0:
		out = append(out, q.srv.segs(start, q.first)...)
		out = append(out, seg{segDecode, q.first, q.end})
	case q.first > 0 && q.first >= start && q.first <= q.end:
		out = append(out, seg{segPrefill, start, q.first}, seg{segDecode, q.first, q.end})
	default:
		out = append(out, seg{segPrefill, start, q.end})
	}
	return out
}

// title is the request's tooltip: who it is and how long each phase took.
func (q *laneReq) title() string {
	var b strings.Builder
	fmt.Fprintf(&b, "request %d", q.id)
	if q.session > 0 {
		fmt.Fprintf(&b, " (session %d, turn %d)", q.session, q.turn)
	}
	if !q.measured {
		b.WriteString(", not measured (warmup or cooldown)")
	}
	for _, s := range q.segs() {
		fmt.Fprintf(&b, "; %s %s", segWords[s.kind], durText(s.b-s.a))
	}
	if q.errClass != "" {
		b.WriteString(" (" + q.errClass + ")")
	} else {
		fmt.Fprintf(&b, "; %d output tokens", q.tokens)
	}
	return b.String()
}

// durText prints a duration in ns with a unit that fits it: 0.8 ms, 81 ms, 1.93 s.
func durText(ns int64) string {
	ms := float64(ns) / 1e6
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.3g s", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.2g ms", ms)
}

// laneRow is one drawn lane: its label and its requests (indexes into the set) in time order.
type laneRow struct {
	label string
	reqs  []int
}

// packLanes packs the requests onto as few lanes as their overlaps allow, a session's turns
// kept together on one lane: each unit (a session, from its first turn's due time to its
// last turn's end, or a request of its own), in order of its start, goes to the lane that
// fell free first, when one is free by then. That is the minimum number of lanes (interval
// partitioning), so a closed loop of N users fills N lanes, each user's requests or sessions
// one after another on its lane.
func packLanes(reqs []laneReq) (rows []laneRow, how string) {
	type unit struct {
		reqs     []int
		from, to int64
	}
	var units []*unit
	bySession := map[int]*unit{}
	for _, i := range byDue(reqs) {
		q := &reqs[i]
		u := bySession[q.session]
		if u == nil || q.session == 0 {
			u = &unit{from: q.due, to: q.end}
			units = append(units, u)
			if q.session > 0 {
				bySession[q.session] = u
			}
		}
		u.reqs, u.to = append(u.reqs, i), max(u.to, q.end)
	}
	free := &laneHeap{}
	for _, u := range units { // in order of start: byDue ordered each unit's first request
		if free.Len() > 0 && (*free)[0].end <= u.from {
			top := heap.Pop(free).(laneEnd)
			rows[top.row].reqs = append(rows[top.row].reqs, u.reqs...)
			heap.Push(free, laneEnd{u.to, top.row})
			continue
		}
		rows = append(rows, laneRow{label: fmt.Sprintf("lane %d", len(rows)+1), reqs: u.reqs})
		heap.Push(free, laneEnd{u.to, len(rows) - 1})
	}
	n := len(rows)
	how = fmt.Sprintf("requests packed onto %d %s, as many as were ever in flight at once (in a loop of users, one lane each)", n, cmpPlural(n, "lane", "lanes"))
	if len(bySession) > 0 {
		how = fmt.Sprintf("%d sessions packed onto %d %s, as many as were ever under way at once (in a loop of users, one lane each); a session's turns one after another, the time between them dashed",
			len(bySession), n, cmpPlural(n, "lane", "lanes"))
	}
	return rows, how
}

// byDue returns the indexes of reqs in order of due time (then id).
func byDue(reqs []laneReq) []int {
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(reqs[a].due, reqs[b].due), cmp.Compare(reqs[a].id, reqs[b].id))
	})
	return order
}

type laneEnd struct {
	end int64
	row int
}

// laneHeap is a min-heap of lanes by the time they fall free (then by row, so the layout
// does not depend on the heap's internals).
type laneHeap []laneEnd

func (h laneHeap) Len() int { return len(h) }
func (h laneHeap) Less(i, j int) bool {
	return h[i].end < h[j].end || h[i].end == h[j].end && h[i].row < h[j].row
}
func (h laneHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *laneHeap) Push(x any)   { *h = append(*h, x.(laneEnd)) }
func (h *laneHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// laneView is one drawn SVG: its lanes, the time window it shows and the run's time origin.
type laneView struct {
	id            string
	rows          []laneRow
	from, to, org int64 // window and origin, ns since t0
	between       bool  // draw the gaps between a session's turns
}

// svg draws the view: a lane per row, each request's segments clipped to the window, an x
// axis in seconds since org. data-n counts the requests drawn.
func (v laneView) svg(reqs []laneReq) string {
	if v.to <= v.from {
		v.to = v.from + 1e6 // every request ended as it was due: a 1 ms axis
	}
	n := len(v.rows)
	laneH := min(max(560/float64(max(n, 1)), 2), 16)
	plotW := wideW - laneLabelW - padR
	h := laneTop + laneH*float64(n) + laneBottom
	span := float64(v.to - v.from)
	sx := func(t int64) float64 { return laneLabelW + float64(t-v.from)/span*plotW }
	var b strings.Builder
	drawn := 0
	var body strings.Builder
	labelEvery := int(max(1, 10/laneH+0.5))
	for k, row := range v.rows {
		y := laneTop + laneH*float64(k)
		if k%labelEvery == 0 {
			fmt.Fprintf(&body, `<text class="tick" x="%.1f" y="%.1f" text-anchor="end" font-size="%.0f">%s</text>`,
				laneLabelW-4, y+laneH/2+3.5, min(11, max(laneH*float64(labelEvery)*0.8, 8)), html.EscapeString(row.label))
		}
		barY, barH := y+laneH*0.15, max(laneH*0.7, 1)
		prevEnd, prevSession := int64(0), 0
		for _, i := range row.reqs {
			q := &reqs[i]
			if v.between && q.session > 0 && q.session == prevSession && q.due > prevEnd && q.due > v.from && prevEnd < v.to {
				fmt.Fprintf(&body, `<line class="sl-g" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`,
					sx(max(prevEnd, v.from)), sx(min(q.due, v.to)), y+laneH/2, y+laneH/2)
			}
			prevEnd, prevSession = q.end, q.session
			if q.end < v.from || q.due > v.to {
				continue
			}
			drawn++
			cls := "req"
			if !q.measured {
				cls += " sl-w"
			}
			fmt.Fprintf(&body, `<g class="%s"><title>%s</title>`, cls, html.EscapeString(q.title()))
			for _, s := range q.segs() {
				a, z := max(s.a, v.from), min(s.b, v.to)
				if z < a {
					continue
				}
				w, cls := sx(z)-sx(a), segClass[s.kind]
				if s.kind != segQueue {
					w = max(w, 0.8) // a short phase stays visible; the queue is drawn as it is
					if q.errClass != "" {
						cls, w = "sl-f", max(w, 2) // an instant 503 must still be seen
					}
				}
				fmt.Fprintf(&body, `<rect class="%s" x="%.1f" y="%.1f" width="%.2f" height="%.1f"/>`, cls, sx(a), barY, w, barH)
			}
			if q.headers > max(q.sent, v.from) && q.headers < v.to && laneH >= 8 && q.errClass == "" && (q.first == 0 || q.headers < q.first) {
				fmt.Fprintf(&body, `<line class="sl-h" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, sx(q.headers), sx(q.headers), barY, barY+barH)
			}
			body.WriteString("</g>")
		}
	}
	fmt.Fprintf(&b, `<svg class="lanes" id="%s" data-n="%d" data-lanes="%d" viewBox="0 0 %g %.1f" role="img" aria-label="requests on the run's time axis">`,
		v.id, drawn, n, wideW, h)
	base := laneTop + laneH*float64(n)
	from, to := float64(v.from-v.org)/1e9, float64(v.to-v.org)/1e9
	for _, x := range niceTicks(from, to, 10) {
		px := laneLabelW + (x-from)/(to-from)*plotW
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, px, px, laneTop, base)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px, base+14, tickLabel(x))
	}
	b.WriteString(body.String())
	fmt.Fprintf(&b, `<rect class="frame" x="%g" y="%g" width="%.1f" height="%.1f"/>`, laneLabelW, laneTop, plotW, base-laneTop)
	fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="middle">time (s since the first request was due)</text></svg>`,
		laneLabelW+plotW/2, h-5)
	return b.String()
}

// laneCSS styles the chart and makes its radio buttons switch views: a pane shows when the
// radio button of its group at the same position is checked.
const laneCSS = `.sl-q{fill:var(--muted);fill-opacity:.55} .sl-p{fill:#d4a72c} .sl-d{fill:var(--c0)} .sl-f{fill:#cf222e}
.sl-n{fill:#8250df;fill-opacity:.6} .sl-sq{fill:#953800}
.sl-g{stroke:var(--frame);stroke-width:1;stroke-dasharray:2 2} .sl-h{stroke:var(--fg);stroke-width:1}
svg.lanes{width:100%;height:auto;display:block} svg.lanes .sl-w{opacity:.4} svg.lanes g.req:hover rect{stroke:var(--fg);stroke-width:.6}
.sl input[type=radio]{position:absolute;opacity:0;width:1px;height:1px}
.sl label{display:inline-block;padding:1px 7px;margin:2px 2px 2px 0;border:1px solid var(--grid);border-radius:4px;cursor:pointer;font-size:12px}
.sl input:checked+label{border-color:var(--fg);font-weight:600} .sl input:focus-visible+label{outline:2px solid var(--c0)}
.sl-legend{font-size:12px;margin:4px 0} .sl-legend i{display:inline-block;width:14px;height:9px;margin:0 4px 0 12px;vertical-align:baseline}
.sl-views>div,.sl-panes>div{display:none}
`

// laneGroup writes a group of radio buttons named name, one per label, the first checked,
// and its CSS rules showing the k-th child of the sibling container cls for the k-th button.
func laneGroup(b, css *strings.Builder, name, cls string, labels []string) {
	for k, l := range labels {
		id := fmt.Sprintf("%s-%d", name, k)
		checked := ""
		if k == 0 {
			checked = " checked"
		}
		fmt.Fprintf(b, `<input type="radio" name="%s" id="%s"%s><label for="%s">%s</label>`, name, id, checked, id, html.EscapeString(l))
		fmt.Fprintf(css, "#%s:checked~.%s>div:nth-child(%d){display:block}\n", id, cls, k+1)
	}
}

// swimlaneHTML draws the set's two views, with their switches and legend.
func swimlaneHTML(run int, set *laneSet) string {
	reqs := set.reqs
	rows, how := packLanes(reqs)
	org, end := reqs[0].due, reqs[0].end
	sessions := false
	for _, q := range reqs {
		org, end = min(org, q.due), max(end, q.end)
		sessions = sessions || q.session > 0
	}
	name := fmt.Sprintf("sl%d", run)
	var b, css strings.Builder
	fmt.Fprintf(&b, `<div class="sl" id="swimlane-%d" data-requests="%d">`, run, len(reqs))
	laneGroup(&b, &css, name+"v", "sl-views", []string{
		fmt.Sprintf("lanes (%d)", len(rows)), fmt.Sprintf("one lane per request (%d)", len(reqs))})
	b.WriteString(`<div class="sl-legend"><i style="background:var(--muted);opacity:.55"></i>client queue (due → sent)` +
		`<i style="background:#d4a72c"></i>server queue + prefill (sent → first token; tick: headers)<i style="background:var(--c0)"></i>decode` +
		`<i style="background:#cf222e"></i>failed`)
	if sessions {
		b.WriteString(`<i style="height:0;border-top:1px dashed var(--frame)"></i>between turns (think or tool time)`)
	}
	if slices.ContainsFunc(reqs, func(q laneReq) bool { return q.srv != nil }) {
		b.WriteString(`; from the server's spans: <i style="background:#8250df;opacity:.6"></i>network / gateway (sent → server; server's first token → ours)` +
			`<i style="background:#953800"></i>server queue<i style="background:#d4a72c"></i>server prefill`)
	}
	b.WriteString(`<i style="background:var(--muted);opacity:.4"></i>warmup / cooldown (paler)</div><div class="sl-views">`)

	// the packed view: the whole run, then laneWindows stretches of it
	labels := []string{"whole run"}
	views := []laneView{{id: name + "-all", rows: rows, from: org, to: end, org: org, between: true}}
	step := (end - org + laneWindows - 1) / laneWindows
	for k := range int64(laneWindows) {
		f, t := org+k*step, min(org+(k+1)*step, end)
		labels = append(labels, fmt.Sprintf("%s–%s s", tickLabel(roundTo(float64(f-org)/1e9)), tickLabel(roundTo(float64(t-org)/1e9))))
		views = append(views, laneView{id: fmt.Sprintf("%s-w%d", name, k+1), rows: rows, from: f, to: t, org: org, between: true})
	}
	b.WriteString(`<div class="sl-user"><div class="note">` + html.EscapeString(how) + `; zoom to a stretch of the run:</div>`)
	lanePanes(&b, &css, name+"z", labels, views, reqs)
	b.WriteString(`</div>`)

	// the per-request view: pages of lanePage requests by due time, each on its own axis
	order := byDue(reqs)
	labels, views = nil, nil
	for p := 0; p*lanePage < len(order) && p < lanePagesMax; p++ {
		page := order[p*lanePage : min((p+1)*lanePage, len(order))]
		v := laneView{id: fmt.Sprintf("%s-p%d", name, p+1), org: org, from: reqs[page[0]].due, to: reqs[page[0]].end}
		for _, i := range page {
			q := &reqs[i]
			label := fmt.Sprintf("#%d", q.id)
			if q.session > 0 {
				label = fmt.Sprintf("s%d t%d", q.session, q.turn)
			}
			v.rows = append(v.rows, laneRow{label: label, reqs: []int{i}})
			v.from, v.to = min(v.from, q.due), max(v.to, q.end)
		}
		labels = append(labels, fmt.Sprintf("%d–%d", p*lanePage+1, p*lanePage+len(page)))
		views = append(views, v)
	}
	note := fmt.Sprintf("requests in order of due time, %d a page, each page on its own time axis", lanePage)
	if len(order) > lanePage*lanePagesMax {
		note += fmt.Sprintf(" (the first %d requests are paged)", lanePage*lanePagesMax)
	}
	b.WriteString(`<div class="sl-request"><div class="note">` + html.EscapeString(note) + `:</div>`)
	lanePanes(&b, &css, name+"p", labels, views, reqs)
	b.WriteString(`</div></div></div>`)
	return "<style>" + laneCSS + css.String() + "</style>" + b.String()
}

// lanePanes writes a group of switches and its panes, one per view.
func lanePanes(b, css *strings.Builder, name string, labels []string, views []laneView, reqs []laneReq) {
	laneGroup(b, css, name, name+"-panes", labels)
	fmt.Fprintf(b, `<div class="sl-panes %s-panes">`, name)
	for _, v := range views {
		b.WriteString("<div>" + v.svg(reqs) + "</div>")
	}
	b.WriteString("</div>")
}

// roundTo rounds a window's edge (s) to 3 significant digits for its switch's label.
func roundTo(s float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(s, 'g', 3, 64), 64)
	return v
}

// swimlanePlots returns the swim-lane chart of each run that holds requests, full width.
func swimlanePlots(runs []Run) []htmlPlot {
	var out []htmlPlot
	for i, r := range runs {
		if r.Series == nil || r.Series.lanes == nil || len(r.Series.lanes.reqs) == 0 {
			continue
		}
		set := r.Series.lanes
		set.joinSpans(r.Header) // spans.go
		title := "Timeline: every request on the run's time axis"
		if len(runs) > 1 {
			title += " — " + r.Label
		}
		note := fmt.Sprintf("%d %s", len(set.reqs), cmpPlural(len(set.reqs), "request", "requests"))
		if set.seen > len(set.reqs) {
			note = fmt.Sprintf("the first %d of %d requests in the file", len(set.reqs), set.seen)
		}
		if set.run > 0 {
			note += fmt.Sprintf(" of run %d (the last)", set.run+1)
		}
		note += "; hover a bar for its request's figures"
		out = append(out, htmlPlot{Title: title, Note: note, SVG: template.HTML(swimlaneHTML(i, set)), Wide: true}) // numbers and escaped text only
	}
	return out
}
