package lockotel_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// dashboardPath is the Grafana dashboard shipped for the Observer's
// metrics.
const dashboardPath = "dashboards/lockgen.json"

// dashboardQuery is one PromQL query of the dashboard and where it is.
type dashboardQuery struct {
	where  string // panel title and refId, or template variable
	expr   string
	legend string // legendFormat, whose {{label}}s must exist too
}

// dashboardQueries reads every query of a dashboard: panel targets (rows
// included) and query variables.
func dashboardQueries(raw []byte) ([]dashboardQuery, error) {
	type target struct {
		RefID, Expr, LegendFormat string
	}
	type panel struct {
		Title   string
		Targets []target
		Panels  []panel
	}
	var d struct {
		Panels     []panel
		Templating struct {
			List []struct {
				Name, Type string
				Query      json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	var out []dashboardQuery
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				out = append(out, dashboardQuery{where: fmt.Sprintf("panel %q %s", p.Title, t.RefID), expr: t.Expr, legend: t.LegendFormat})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			return nil, fmt.Errorf("variable %s: %v", v.Name, err)
		}
		out = append(out, dashboardQuery{where: "variable " + v.Name, expr: q.Query})
	}
	return out, nil
}

// legendLabel finds the {{label}}s of a legend format.
var legendLabel = regexp.MustCompile(`{{\s*([A-Za-z_][A-Za-z0-9_]*)\s*}}`)

// checkQuery lists what q names that the scrape does not have: a metric,
// a label on that metric, or a grouping or legend label on none of the
// query's metrics.
func checkQuery(q dashboardQuery, scraped series) []string {
	var problems []string
	if strings.TrimSpace(q.expr) == "" {
		return []string{q.where + ": empty query"}
	}
	refs := readQuery(q.expr)
	for _, p := range refs.problems {
		problems = append(problems, fmt.Sprintf("%s: %s in %s", q.where, p, q.expr))
	}
	if len(refs.selectors) == 0 {
		problems = append(problems, q.where+": names no metric: "+q.expr)
	}
	onAny := map[string]bool{}
	for _, sel := range refs.selectors {
		labels, ok := scraped[sel.metric]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: metric %s is not exported", q.where, sel.metric))
			continue
		}
		for l := range labels {
			onAny[l] = true
		}
		for _, l := range sel.labels {
			if !labels[l] {
				problems = append(problems, fmt.Sprintf("%s: %s has no label %s", q.where, sel.metric, l))
			}
		}
	}
	used := refs.grouping
	for _, m := range legendLabel.FindAllStringSubmatch(q.legend, -1) {
		used = append(used, m[1])
	}
	for _, l := range used {
		if !onAny[l] {
			problems = append(problems, fmt.Sprintf("%s: no metric of the query has label %s", q.where, l))
		}
	}
	return problems
}

// checkDashboard checks every query, and that every lockgen metric the
// Observer exports has a query: a new instrument needs a panel.
func checkDashboard(queries []dashboardQuery, scraped series) []string {
	var problems []string
	queried := map[string]bool{}
	for _, q := range queries {
		problems = append(problems, checkQuery(q, scraped)...)
		for _, sel := range readQuery(q.expr).selectors {
			queried[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(sel.metric, "_bucket"), "_sum"), "_count")] = true
		}
	}
	for name := range scraped {
		family := strings.TrimSuffix(name, "_bucket")
		if family != name || (strings.HasPrefix(name, "lockgen_") && strings.HasSuffix(name, "_total")) {
			if !queried[family] {
				problems = append(problems, "no query uses "+family)
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// Every metric and label the dashboard's queries name is one the Observer
// exports through the OpenTelemetry Prometheus exporter, and every metric
// it exports is on the dashboard.
func TestDashboardMatchesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	queries, err := dashboardQueries(raw)
	if err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	if len(queries) < 10 {
		t.Fatalf("%s: only %d queries read; the reader missed panels", dashboardPath, len(queries))
	}
	scraped := parseScrape(t, scrapeAfterEveryEvent(t))
	for _, p := range checkDashboard(queries, scraped) {
		t.Error(p)
	}
}

// The check finds each kind of wrong name: a query that passes it names
// only what a scrape holds.
func TestDashboardCheckCatchesUnknownNames(t *testing.T) {
	scraped := parseScrape(t, scrapeAfterEveryEvent(t))
	good := dashboardQuery{where: "good", expr: `sum by (lockgen_method) (rate(lockgen_lock_busy_total{lockgen_key_template=~"$template"}[$__rate_interval]))`, legend: "{{lockgen_method}}"}
	if p := checkQuery(good, scraped); len(p) != 0 {
		t.Fatalf("a correct query is reported: %v", p)
	}
	wrong := map[string]dashboardQuery{
		"metric typo":             {expr: `rate(lockgen_lock_busy_count[5m])`},
		"dots not translated":     {expr: `rate(lockgen.lock.busy[5m])`},
		"unit suffix missing":     {expr: `rate(lockgen_lock_wait_duration_bucket[5m])`},
		"label typo in selector":  {expr: `rate(lockgen_lock_busy_total{lockgen_methd="x"}[5m])`},
		"key label (off default)": {expr: `rate(lockgen_lock_busy_total{lockgen_key=~".+"}[5m])`},
		"outcome on busy":         {expr: `rate(lockgen_lock_busy_total{lockgen_outcome="busy"}[5m])`},
		"grouping label typo":     {expr: `sum by (lockgen_template) (rate(lockgen_lock_lost_total[5m]))`},
		"le without buckets":      {expr: `histogram_quantile(0.9, sum by (le) (rate(lockgen_lock_wait_duration_seconds_count[5m])))`},
		"variable label typo":     {expr: `label_values(lockgen_lock_acquired_total, lockgen_mthod)`},
		"legend label typo":       {expr: `sum by (lockgen_method) (rate(lockgen_call_skipped_total[5m]))`, legend: "{{lockgen_key_template}}"},
		"function typo":           {expr: `sum(rte(lockgen_lock_lost_total[5m]))`},
		"selector without metric": {expr: `{lockgen_method="x"}`},
	}
	for name, q := range wrong {
		q.where = name
		if p := checkQuery(q, scraped); len(p) == 0 {
			t.Errorf("%s: %s passed the check", name, q.expr)
		}
	}
	missing := checkDashboard([]dashboardQuery{good}, scraped)
	if !strings.Contains(strings.Join(missing, "\n"), "no query uses lockgen_lock_lost_total") {
		t.Errorf("a dashboard without the lost locks passed: %v", missing)
	}
}
