package harness

import (
	"bytes"
	"os"
	"path/filepath"
)

// WriteFiles writes the report to mdPath, the handoff chart to svgPath and,
// when workloads 5 and 6 ran, their charts to ProcessesChartFile and
// ManyKeysChartFile next to svgPath; the
// report links the charts by their paths relative to the report.
func WriteFiles(res *Results, mdPath, svgPath string) error {
	rel, err := filepath.Rel(filepath.Dir(mdPath), svgPath)
	if err != nil {
		rel = svgPath
	}
	var md, svg, procs bytes.Buffer
	if err := WriteMarkdown(&md, res, filepath.ToSlash(rel)); err != nil {
		return err
	}
	if err := WriteHandoffSVG(&svg, res); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(mdPath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(mdPath, md.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(svgPath, svg.Bytes(), 0o644); err != nil {
		return err
	}
	if len(res.Opts.ManyGoroutines) > 0 && len(res.Opts.ManyPeers) > 0 {
		var many bytes.Buffer
		if err := WriteManyKeysSVG(&many, res); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(svgPath), ManyKeysChartFile), many.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if len(res.Opts.Processes) == 0 {
		return nil
	}
	if err := WriteProcessesSVG(&procs, res); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(filepath.Dir(svgPath), ProcessesChartFile), procs.Bytes(), 0o644)
}
