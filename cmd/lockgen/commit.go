package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"

	"github.com/lockgen/lockgen/internal/generator"
)

// commit brings one output file to its wanted state. It writes only when
// the bytes change (so file times and build caches stay put), through a
// temporary file in the same directory and a rename, so a reader never sees
// half a file. A File without content removes lockgen's earlier output.
func commit(f generator.File) error {
	old, err := os.ReadFile(f.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if f.Content == nil {
		if exists {
			return os.Remove(f.Path)
		}
		return nil
	}
	if exists && bytes.Equal(old, f.Content) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(f.Content); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
