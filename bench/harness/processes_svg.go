package harness

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// ProcessesChartFile is the file name of workload 5's chart; it is written
// next to the handoff chart.
const ProcessesChartFile = "processes.svg"

// processSeries is one line of the chart: a lockgen kind's executed commands
// per grant (median over repetitions) at each process count.
type processSeries struct {
	peer   string
	colour string
	dash   string // stroke-dasharray: "none" for a solid line
	values []float64
}

// The processes chart's kinds and their colours.
const (
	processMutexPeer, processFairPeer     = "lockgen/mutex", "lockgen/fair"
	processMutexColour, processFairColour = "#d62728", "#9467bd"
)

// WriteProcessesSVG draws workload 5: commands Redis executed per grant
// against the number of processes, for lockgen's mutex and fair kinds, on a
// linear scale with lockgen/mutex's two limits (the absolute one at the most
// processes, and the steepest climb allowed from the fewest processes) and
// lockgen/fair's absolute one.
func WriteProcessesSVG(w io.Writer, res *Results) error {
	const (
		width, height = 720.0, 380.0
		left, right   = 70.0, 200.0
		top, bottom   = 50.0, 50.0
		plotW, plotH  = width - left - right, height - top - bottom
	)
	o := res.Opts
	lo, hi, ok := processRange(o)
	if !ok {
		lo, hi = 1, 2
	}
	series, mutexAtLo, peak := processesSeries(res, lo)
	step := niceStep(peak * 1.1 / 6)
	yMax := math.Ceil(peak*1.1/step) * step
	x := func(procs int) float64 { return left + plotW*float64(procs)/float64(hi) }
	y := func(v float64) float64 { return top + plotH*(1-v/yMax) }

	c := newSVGChart(width, height, fmt.Sprintf("Commands Redis executed per grant on one hot key, %d goroutines per process", o.ProcGoroutines))
	p := c.p
	c.linearGrid(plotArea{left, top, plotW, plotH}, yMax, step, y, func(i int) float64 { return x(o.Processes[i]) }, o.Processes)
	p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, left, top+plotH, left+plotW, top+plotH)
	p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, left, top, left, top+plotH)
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">processes</text>`, left+plotW/2, height-10)

	p(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">executed / grant</text>`, top+plotH/2)

	lim := processLimits{p: p, left: left, right: left + plotW, x: x, y: y}
	lim.draw(lo, hi, mutexAtLo, hasPeer(o.ProcPeers, processFairPeer))
	for i, s := range series {
		writeProcessSeries(p, s, o.Processes, x, y)
		lx := left + 160*float64(i)
		p(`<line x1="%.1f" y1="38" x2="%.1f" y2="38" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`, lx, lx+30, s.colour, s.dash)
		p(`<text x="%.1f" y="42">%s</text>`, lx+36, html.EscapeString(s.peer))
	}
	return c.writeTo(w)
}

// processesSeries gathers the chart's lines, the mutex's value at the
// fewest processes lo (NaN if unmeasured) and the greatest value the
// y axis must reach, limits included.
func processesSeries(res *Results, lo int) (series []processSeries, mutexAtLo, peak float64) {
	executed := func(c ContendedResult, _ Rep) float64 { return c.ExecutedPerGrant }
	series = []processSeries{
		{peer: processMutexPeer, colour: processMutexColour, dash: "none"},
		{peer: processFairPeer, colour: processFairColour, dash: "6 4"},
	}
	peak = float64(max(maxExecutedPerGrant, maxFairExecutedPerGrant))
	for i := range series {
		for _, procs := range res.Opts.Processes {
			v := overReps(res.Reps, processesMetric(series[i].peer, procs, executed)).Median
			series[i].values = append(series[i].values, v)
			if !math.IsNaN(v) {
				peak = math.Max(peak, v)
			}
		}
	}
	mutexAtLo = overReps(res.Reps, processesMetric(processMutexPeer, lo, executed)).Median
	if !math.IsNaN(mutexAtLo) {
		peak = math.Max(peak, maxExecutedGrowth*mutexAtLo)
	}
	return series, mutexAtLo, peak
}

// processLimits draws the limits on the processes chart: in grey for
// lockgen/mutex and in fair's colour for lockgen/fair, labelled in the
// right margin.
type processLimits struct {
	p           func(string, ...any)
	left, right float64 // the plot's edges
	x           func(procs int) float64
	y           func(v float64) float64
	labels      []float64 // the y of every label placed so far
}

// draw draws the mutex's absolute limit at hi processes, its growth limit
// from lo (when measured there) and, with fair on the chart, fair's.
func (l *processLimits) draw(lo, hi int, mutexAtLo float64, fair bool) {
	absY := l.y(maxExecutedPerGrant)
	l.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#777" stroke-dasharray="2 3"/>`, l.left, absY, l.right, absY)
	l.label(absY, "#555", fmt.Sprintf("mutex limit at %d processes: %d", hi, maxExecutedPerGrant))
	if !math.IsNaN(mutexAtLo) && hi > lo {
		endY := l.y(maxExecutedGrowth * mutexAtLo)
		l.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#777" stroke-dasharray="2 3"/>`, l.x(lo), l.y(mutexAtLo), l.x(hi), endY)
		l.label(endY, "#555", fmt.Sprintf("mutex limit: %.1f × at %d", maxExecutedGrowth, lo))
	}
	if fair {
		fairY := l.y(maxFairExecutedPerGrant)
		l.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="2 3"/>`, l.left, fairY, l.right, fairY, processFairColour)
		l.label(fairY, processFairColour, fmt.Sprintf("fair limit at %d processes: %d", hi, maxFairExecutedPerGrant))
	}
}

// label writes text in the right margin at height at, moved down while it
// would overlap a label placed before.
func (l *processLimits) label(at float64, colour, text string) {
	for moved := true; moved; {
		moved = false
		for _, prev := range l.labels {
			if math.Abs(at-prev) < 14 {
				at, moved = prev+14, true
			}
		}
	}
	l.labels = append(l.labels, at)
	l.p(`<text x="%.1f" y="%.1f" fill="%s">%s</text>`, l.right+8, at+4, colour, html.EscapeString(text))
}

// writeProcessSeries draws one series as a polyline through its measured
// points, each marked and labelled with its value; unmeasured points are
// left out.
func writeProcessSeries(p func(string, ...any), s processSeries, procs []int, x func(int) float64, y func(float64) float64) {
	var pts []string
	for i, v := range s.values {
		if !math.IsNaN(v) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(procs[i]), y(v)))
		}
	}
	if len(pts) > 1 {
		p(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`, strings.Join(pts, " "), s.colour, s.dash)
	}
	for i, v := range s.values {
		if math.IsNaN(v) {
			continue
		}
		p(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`, x(procs[i]), y(v), s.colour)
		p(`<text x="%.1f" y="%.1f" fill="%s">%.1f</text>`, x(procs[i])+7, y(v)-7, s.colour, v)
	}
}

// niceStep rounds a raw axis step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) {
		return 1
	}
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}
