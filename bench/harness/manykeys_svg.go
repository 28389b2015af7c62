package harness

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// ManyKeysChartFile is the file name of workload 6's chart; it is written
// next to the handoff chart.
const ManyKeysChartFile = "manykeys.svg"

// manyKeysColours: lockgen's configurations in reds and purples, the other
// libraries in blues, greens and greys, so that lockgen stands out.
var manyKeysColours = map[string]string{
	"lockgen/mutex":              "#d62728",
	"lockgen/mutex-rueidis":      "#ff7f0e",
	"lockgen/mutex-autopipeline": "#8c564b",
	"lockgen/fair":               "#9467bd",
	"lockgen/fair-rueidis":       "#e377c2",
	"redislock/default":          "#1f77b4",
	"redislock/autopipeline":     "#17becf",
	"redsync/default":            "#7f7f7f",
	"rueidislock/tuned":          "#2ca02c",
}

// WriteManyKeysSVG draws workload 6: cycles per second (median over
// repetitions) against the number of goroutines, one line per peer. The
// goroutine counts are spaced evenly (they grow by factors), the
// throughput axis is linear from zero.
func WriteManyKeysSVG(w io.Writer, res *Results) error {
	const (
		width, height = 780.0, 420.0
		left, right   = 80.0, 250.0
		top, bottom   = 50.0, 50.0
		plotW, plotH  = width - left - right, height - top - bottom
	)
	o := res.Opts
	all, peak := manyKeysSeries(res)
	step := niceStep(peak * 1.1 / 6)
	yMax := math.Ceil(peak*1.1/step) * step
	n := max(len(o.ManyGoroutines), 2)
	x := func(i int) float64 { return left + plotW*float64(i)/float64(n-1) }
	y := func(v float64) float64 { return top + plotH*(1-v/yMax) }

	c := newSVGChart(width, height, fmt.Sprintf("Many keys (random of %d): lock + INCR + unlock per second", o.ManyKeys))
	p := c.p
	c.linearGrid(plotArea{left, top, plotW, plotH}, yMax, step, y, x, o.ManyGoroutines)
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">goroutines</text>`, left+plotW/2, height-10)
	p(`<text x="16" y="%.1f" transform="rotate(-90 16 %.1f)" text-anchor="middle">cycles/s</text>`, top+plotH/2, top+plotH/2)
	for k, s := range all {
		colour := manyKeysColours[s.peer]
		if colour == "" {
			colour = "#bcbd22"
		}
		dash := "none"
		if !isLockgen(s.peer) {
			dash = "5 3"
		}
		var pts []string
		for i, v := range s.values {
			if math.IsNaN(v) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
			p(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, x(i), y(v), colour)
		}
		if len(pts) > 1 {
			p(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`, strings.Join(pts, " "), colour, dash)
		}
		ly := top + 10 + float64(k)*20
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`, left+plotW+15, ly, left+plotW+40, ly, colour, dash)
		p(`<text x="%.1f" y="%.1f">%s</text>`, left+plotW+46, ly+4, html.EscapeString(s.peer))
	}
	return c.writeTo(w)
}

// manyKeysLine is one peer's line of the many-keys chart: its throughput
// (median over repetitions) at each goroutine count, NaN where unmeasured.
type manyKeysLine struct {
	peer   string
	values []float64
}

// manyKeysSeries gathers the chart's lines and the greatest throughput
// measured (1 at the least, for the axis).
func manyKeysSeries(res *Results) (all []manyKeysLine, peak float64) {
	peak = 1.0
	for _, pr := range res.Opts.ManyPeers {
		s := manyKeysLine{peer: pr.Name()}
		for _, g := range res.Opts.ManyGoroutines {
			v := overReps(res.Reps, manyKeysMetric(pr.Name(), g, func(m ManyKeysResult) float64 { return m.Throughput })).Median
			s.values = append(s.values, v)
			if !math.IsNaN(v) {
				peak = math.Max(peak, v)
			}
		}
		all = append(all, s)
	}
	return all, peak
}
