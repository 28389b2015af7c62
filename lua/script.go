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
	Source string // the full source sent to Redis: the prelude helpers it uses, then the operation
	SHA1   string // hex SHA-1 of Source, what EVALSHA takes

	// helpers names the prelude helpers Source defines, in prelude order.
	helpers []string
	// preludeLine[i] is the line of prelude.lua that line i+1 of Source
	// comes from; the lines after those are the operation's file. A line
	// number reported by Redis or by a coverage tool can so be traced back
	// to the file it was written in.
	preludeLine []int
	// bodyOffset is where the operation's file starts in Source.
	bodyOffset int
}

// PreludeFile is the name of the file that holds the helpers shared by the
// scripts.
const PreludeFile = "prelude.lua"

// File reports which embedded file and which line of it produced line
// sourceLine (1-based) of s.Source: PreludeFile for the shared helpers,
// otherwise s.Name + ".lua".
func (s *Script) File(sourceLine int) (file string, line int) {
	if sourceLine >= 1 && sourceLine <= len(s.preludeLine) {
		return PreludeFile, s.preludeLine[sourceLine-1]
	}
	return s.Name + ".lua", sourceLine - len(s.preludeLine)
}

// Helpers returns the names of the prelude helpers that s.Source defines,
// in the order it defines them: the ones its operation uses, directly or
// through another helper.
func (s *Script) Helpers() []string { return append([]string(nil), s.helpers...) }

// Body returns the operation's own file, the part of Source after the
// helpers.
func (s *Script) Body() string { return s.Source[s.bodyOffset:] }

// The scripts, one per operation; see the package documentation and the
// comment at the top of each .lua file for KEYS, ARGV and the reply.
var (
	MutexAcquire = mustLoad("mutex_acquire")
	MutexRenew   = mustLoad("mutex_renew")
	MutexRelease = mustLoad("mutex_release")
	MutexInspect = mustLoad("mutex_inspect")
	MutexForce   = mustLoad("mutex_force_release")

	// MutexFloor is the quorum Locker's renewal: it also raises the
	// lock's fence to a floor (lua/mutex_floor.lua).
	MutexFloor = mustLoad("mutex_floor")

	FairAcquire   = mustLoad("fair_acquire")
	FairRenew     = mustLoad("fair_renew")
	FairRelease   = mustLoad("fair_release")
	FairHeartbeat = mustLoad("fair_heartbeat")
	FairInspect   = mustLoad("fair_inspect")
	FairForce     = mustLoad("fair_force_release")

	ReadAcquire  = mustLoad("read_acquire")
	ReadRenew    = mustLoad("read_renew")
	ReadRelease  = mustLoad("read_release")
	WriteAcquire = mustLoad("write_acquire")
	WriteRenew   = mustLoad("write_renew")
	WriteRelease = mustLoad("write_release")
	RWInspect    = mustLoad("rw_inspect")
	RWForce      = mustLoad("rw_force_release")

	SemaphoreAcquire = mustLoad("semaphore_acquire")
	SemaphoreRenew   = mustLoad("semaphore_renew")
	SemaphoreRelease = mustLoad("semaphore_release")
	SemaphoreInspect = mustLoad("semaphore_inspect")
	SemaphoreForce   = mustLoad("semaphore_force_release")

	LatchSet       = mustLoad("latch_set")
	LatchCountDown = mustLoad("latch_count_down")
	LatchCount     = mustLoad("latch_count")
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

// Prelude returns prelude.lua, the helpers shared by the scripts; each
// Script.Source opens with those of them it uses.
func Prelude() string { return prelude }

//go:embed *.lua
var files embed.FS

var (
	prelude        = mustRead(PreludeFile)
	preludeHelpers = mustSplit(prelude)
	registry       = map[string]*Script{}
)

func mustRead(file string) string {
	b, err := files.ReadFile(file)
	if err != nil {
		// The files are embedded at build time; a missing one is a build mistake.
		panic(fmt.Sprintf("lua: embedded %s: %v", file, err))
	}
	return string(b)
}

func mustSplit(src string) []helper {
	hs, err := splitPrelude(src)
	if err != nil {
		// The prelude is embedded at build time; the package tests load it.
		panic("lua: " + err.Error())
	}
	return hs
}

func mustLoad(name string) *Script {
	body := mustRead(name + ".lua")
	hs, err := helpersFor(preludeHelpers, body)
	if err != nil {
		panic(fmt.Sprintf("lua: %s.lua: %v", name, err))
	}
	s := &Script{Name: name}
	var src strings.Builder
	for _, h := range hs {
		s.helpers = append(s.helpers, h.name)
		for i, l := range h.lines {
			src.WriteString(l)
			src.WriteByte('\n')
			s.preludeLine = append(s.preludeLine, h.first+i)
		}
	}
	s.bodyOffset = src.Len()
	src.WriteString(body)
	s.Source = src.String()
	sum := sha1.Sum([]byte(s.Source))
	s.SHA1 = hex.EncodeToString(sum[:])
	registry[name] = s
	return s
}
