package main

import (
	"flag"
	"io"
	"strings"
)

// Operators write the connection flags where other tools take them, before
// the command: `lockgen -redis URL locks ls` or `lockgen locks -redis URL
// ls`. Go's flag package stops at the first operand, so such flags are moved
// behind the subcommand, where its FlagSet parses them.

// locksFlagSet is the FlagSet of the subcommands, to look flags up in.
func locksFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("lockgen locks", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	new(locksCmd).defineFlags(fs)
	return fs
}

// leadingLocksFlags returns how many of args, from the start, are flags of
// the locks subcommands with their values; it stops at the first operand,
// at "--", and at any other flag (-h, or one of the generator's).
func leadingLocksFlags(args []string) int {
	fs := locksFlagSet()
	i := 0
	for i < len(args) {
		name, hasValue, ok := flagName(args[i])
		if !ok {
			return i
		}
		f := fs.Lookup(name)
		if f == nil {
			return i
		}
		i++
		if b, isBool := f.Value.(interface{ IsBoolFlag() bool }); (!isBool || !b.IsBoolFlag()) && !hasValue {
			if i == len(args) {
				return i - 1 // a value flag without its value: let the usage say so
			}
			i++
		}
	}
	return i
}

// flagName reads "-name", "--name" or "-name=value".
func flagName(arg string) (name string, hasValue, ok bool) {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" {
		return "", false, false
	}
	name = strings.TrimPrefix(arg[1:], "-")
	name, _, hasValue = strings.Cut(name, "=")
	return name, hasValue, name != ""
}

// locksArgs reports whether the command line is `lockgen [flags] locks
// ...`, with only locks flags before "locks", and returns what follows
// "locks" with those flags in front. A package directory named locks is
// spelt ./locks, so `lockgen locks` never meant the generator.
func locksArgs(args []string) ([]string, bool) {
	n := leadingLocksFlags(args)
	if n >= len(args) || args[n] != "locks" {
		return nil, false
	}
	return append(append([]string(nil), args[:n]...), args[n+1:]...), true
}

// flagsAfterSubcommand moves the locks flags that come before the
// subcommand behind it: [-redis URL ls x] becomes [ls -redis URL x].
func flagsAfterSubcommand(args []string) []string {
	n := leadingLocksFlags(args)
	if n == 0 || n >= len(args) || strings.HasPrefix(args[n], "-") {
		return args
	}
	moved := []string{args[n]}
	moved = append(moved, args[:n]...)
	return append(moved, args[n+1:]...)
}
