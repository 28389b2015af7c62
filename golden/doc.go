// Package golden holds lockgen's golden tests: one input package per folder
// under testdata/<case>/, with the expected output in want/lock_gen.go or,
// for inputs lockgen must reject, the expected diagnostics in
// want/errors.txt (file base names only, so positions are stable).
//
//	go test ./golden/...            compare, and build + vet every golden
//	go test ./golden/... -update    rewrite the expectations
//
// Every change to generated code therefore shows up as a reviewed diff of
// want/lock_gen.go.
package golden
