package harness

import (
	"bytes"
	"os"
	"path/filepath"
)

// WriteFiles writes the report to mdPath and the chart to svgPath; the
// report links the chart by its path relative to the report.
func WriteFiles(res *Results, mdPath, svgPath string) error {
	rel, err := filepath.Rel(filepath.Dir(mdPath), svgPath)
	if err != nil {
		rel = svgPath
	}
	var md, svg bytes.Buffer
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
	return os.WriteFile(svgPath, svg.Bytes(), 0o644)
}
