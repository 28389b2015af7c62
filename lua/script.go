package lua

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Script is one lockgen operation as it is sent to Redis.
type Script struct {
	Name   string // "mutex_acquire": the file lua/<Name>.lua
	Source string // the full source sent to Redis: the shared prelude, then the operation
	SHA1   string // hex SHA-1 of Source, what EVALSHA takes

	// preludeLines is how many lines of Source come from prelude.lua, so that a
	// line number reported by Redis or by a coverage tool can be traced back to
	// the file it was written in.
	preludeLines int
}

// PreludeFile is the name of the file whose helpers open every Source.
const PreludeFile = "prelude.lua"

// File reports which embedded file and which line of it produced line
// sourceLine (1-based) of s.Source: PreludeFile for the shared helpers,
// otherwise s.Name + ".lua".
func (s *Script) File(sourceLine int) (file string, line int) {
	if sourceLine <= s.preludeLines {
		return PreludeFile, sourceLine
	}
	return s.Name + ".lua", sourceLine - s.preludeLines
}

// The scripts, one per operation; see the package documentation and the
// comment at the top of each .lua file for KEYS, ARGV and the reply.
var (
	MutexAcquire = mustLoad("mutex_acquire")
	MutexRenew   = mustLoad("mutex_renew")
	MutexRelease = mustLoad("mutex_release")

	FairAcquire   = mustLoad("fair_acquire")
	FairRenew     = mustLoad("fair_renew")
	FairRelease   = mustLoad("fair_release")
	FairLeave     = mustLoad("fair_leave")
	FairHeartbeat = mustLoad("fair_heartbeat")

	ReadAcquire  = mustLoad("read_acquire")
	ReadRenew    = mustLoad("read_renew")
	ReadRelease  = mustLoad("read_release")
	WriteAcquire = mustLoad("write_acquire")
	WriteRenew   = mustLoad("write_renew")
	WriteRelease = mustLoad("write_release")
	WriteLeave   = mustLoad("write_leave")

	SemaphoreAcquire = mustLoad("semaphore_acquire")
	SemaphoreRenew   = mustLoad("semaphore_renew")
	SemaphoreRelease = mustLoad("semaphore_release")
)

// All returns every script, sorted by name.
func All() []*Script {
	out := make([]*Script, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ByName returns the script called name ("mutex_acquire"), if there is one.
func ByName(name string) (*Script, bool) {
	s, ok := registry[name]
	return s, ok
}

// Prelude returns the shared helper source that opens every Script.Source.
func Prelude() string { return prelude }

//go:embed *.lua
var files embed.FS

var (
	prelude  = mustRead(PreludeFile)
	registry = map[string]*Script{}
)

func mustRead(file string) string {
	b, err := files.ReadFile(file)
	if err != nil {
		// The files are embedded at build time; a missing one is a build mistake.
		panic(fmt.Sprintf("lua: embedded %s: %v", file, err))
	}
	return string(b)
}

func mustLoad(name string) *Script {
	body := mustRead(name + ".lua")
	head := prelude
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	src := head + body
	sum := sha1.Sum([]byte(src))
	s := &Script{
		Name:         name,
		Source:       src,
		SHA1:         hex.EncodeToString(sum[:]),
		preludeLines: strings.Count(head, "\n"),
	}
	registry[name] = s
	return s
}
