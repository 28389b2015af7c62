package harness

import (
	"fmt"
	"html"
	"io"
	"math"
	"path"
	"strings"
)

// The handoff chart's layout, in SVG units.
const (
	handoffLabelW = 190.0 // the peers' names, left of the bars
	handoffPlotW  = 520.0
	handoffValueW = 190.0 // the values, right of the bars
	handoffRowH   = 22.0
	handoffGroupH = 30.0 // a goroutine count's title
	handoffTopH   = 40.0
	handoffAxisH  = 36.0
	handoffBarH   = 14.0
	handoffMinUs  = 1.0 // the axis starts at 1 µs at the least
)

// WriteHandoffSVG draws the handoff latency of every peer (median over
// repetitions) as horizontal bars on a logarithmic axis: a dark bar to the
// p50, a light one to the p99, one group per goroutine count. Polling
// libraries and event-driven ones differ by orders of magnitude, hence the
// log scale.
func WriteHandoffSVG(w io.Writer, res *Results) error {
	groups, lo, hi := handoffGroups(res)
	if math.IsInf(lo, 1) { // nothing measured: one decade to draw an empty axis
		lo, hi = 10, 100
	}
	decLo := math.Floor(math.Log10(math.Max(lo, handoffMinUs)))
	decHi := math.Ceil(math.Log10(hi))
	if decHi <= decLo {
		decHi = decLo + 1
	}
	x := func(us float64) float64 {
		if us <= 0 || math.IsNaN(us) {
			return handoffLabelW
		}
		f := (math.Log10(us) - decLo) / (decHi - decLo)
		return handoffLabelW + math.Max(0, math.Min(1, f))*handoffPlotW
	}

	height := handoffTopH + handoffAxisH
	for _, g := range groups {
		height += handoffGroupH + float64(len(g.rows))*handoffRowH
	}
	c := newSVGChart(handoffLabelW+handoffPlotW+handoffValueW, height, "Handoff latency on one hot key (µs, log scale): dark p50, light p99")
	p := c.p
	y := handoffTopH
	for _, g := range groups {
		p(`<text x="10" y="%.1f" font-weight="bold">%s</text>`, y+handoffGroupH-10, html.EscapeString(g.title))
		y += handoffGroupH
		for _, r := range g.rows {
			writeHandoffBar(p, r, y, x)
			y += handoffRowH
		}
	}
	// Axis: one tick per decade.
	p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, handoffLabelW, y+4, handoffLabelW+handoffPlotW, y+4)
	for d := decLo; d <= decHi; d++ {
		tx := x(math.Pow(10, d))
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ccc"/>`, tx, handoffTopH, tx, y+4)
		p(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, tx, y+20, fmtMicros(math.Pow(10, d)))
	}
	return c.writeTo(w)
}

// writeHandoffBar draws one peer's row at height y: its name, its bars
// (lockgen's red, the others blue) and its values, or "not measured".
func writeHandoffBar(p func(string, ...any), r handoffRow, y float64, x func(us float64) float64) {
	p(`<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, handoffLabelW-8, y+handoffRowH/2+4, html.EscapeString(r.name))
	if math.IsNaN(r.p50) {
		p(`<text x="%.1f" y="%.1f" fill="#777">not measured</text>`, handoffLabelW+4, y+handoffRowH/2+4)
		return
	}
	fill := "#1f77b4"
	if strings.HasPrefix(r.name, "lockgen/") {
		fill = "#d62728"
	}
	barY := y + (handoffRowH-handoffBarH)/2
	p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.3"/>`, handoffLabelW, barY, x(r.p99)-handoffLabelW, handoffBarH, fill)
	p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, handoffLabelW, barY, x(r.p50)-handoffLabelW, handoffBarH, fill)
	p(`<text x="%.1f" y="%.1f">p50 %s · p99 %s</text>`, handoffLabelW+handoffPlotW+8, y+handoffRowH/2+4, fmtMicros(r.p50), fmtMicros(r.p99))
}

// handoffRow is one library's bar in the handoff chart.
type handoffRow struct {
	name     string
	p50, p99 float64 // µs, NaN when not measured
}

// handoffGroup is the bars of one goroutine count.
type handoffGroup struct {
	title string
	rows  []handoffRow
}

// handoffGroups gathers the handoff chart's bars, medians over the
// repetitions, and the least and greatest value measured (for the axis;
// +Inf and -Inf if none).
func handoffGroups(res *Results) (groups []handoffGroup, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, n := range res.Opts.Goroutines {
		g := handoffGroup{title: fmt.Sprintf("%d goroutines in 2 processes, hold %v", n, res.Opts.Hold)}
		for _, p := range res.Opts.Peers {
			name := p.Name()
			r := handoffRow{
				name: name,
				p50:  overReps(res.Reps, contendedMetric(name, n, func(c ContendedResult, _ Rep) float64 { return handoffMicros(c, 50) })).Median,
				p99:  overReps(res.Reps, contendedMetric(name, n, func(c ContendedResult, _ Rep) float64 { return handoffMicros(c, 99) })).Median,
			}
			for _, v := range []float64{r.p50, r.p99} {
				if !math.IsNaN(v) && v > 0 {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
			g.rows = append(g.rows, r)
		}
		groups = append(groups, g)
	}
	return groups, lo, hi
}

// fmtMicros prints a duration given in µs with a readable unit.
func fmtMicros(us float64) string {
	switch {
	case math.IsNaN(us):
		return "—"
	case us >= 1e6:
		return fmt.Sprintf("%.3g s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.3g ms", us/1e3)
	}
	return fmt.Sprintf("%.3g µs", us)
}

// svgChart collects a chart's elements. Every chart opens alike (its size,
// the font, a white background, a bold title in the top left corner) and
// closes alike.
type svgChart struct{ b strings.Builder }

func newSVGChart(width, height float64, title string) *svgChart {
	c := &svgChart{}
	c.p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`, width, height, width, height)
	c.p(`<rect width="100%%" height="100%%" fill="white"/>`)
	c.p(`<text x="10" y="22" font-size="15" font-weight="bold">%s</text>`, title)
	return c
}

// p writes one element, its attributes formatted as by fmt.Printf.
func (c *svgChart) p(format string, args ...any) { fmt.Fprintf(&c.b, format+"\n", args...) }

// writeTo closes the chart and writes it to w.
func (c *svgChart) writeTo(w io.Writer) error {
	c.p(`</svg>`)
	_, err := io.WriteString(w, c.b.String())
	return err
}

// plotArea is where a chart draws its data, in SVG units.
type plotArea struct{ left, top, w, h float64 }

// linearGrid draws the grid of a plot whose y axis is linear from 0 to
// yMax: a labelled horizontal line every step, and a vertical line at x(i)
// labelled xLabels[i] below the plot.
func (c *svgChart) linearGrid(a plotArea, yMax, step float64, y func(float64) float64, x func(int) float64, xLabels []int) {
	for v := 0.0; v <= yMax+step/2; v += step {
		c.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, a.left, y(v), a.left+a.w, y(v))
		c.p(`<text x="%.1f" y="%.1f" text-anchor="end">%g</text>`, a.left-6, y(v)+4, v)
	}
	for i, label := range xLabels {
		c.p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, x(i), a.top, x(i), a.top+a.h)
		c.p(`<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`, x(i), a.top+a.h+18, label)
	}
}

// besideHandoffChart is the name of chart file, written next to the
// handoff chart, relative to the report, given the handoff chart's name.
func besideHandoffChart(handoffName, file string) string {
	return path.Join(path.Dir(handoffName), file)
}
