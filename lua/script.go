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
	Source string // the full source sent to Redis: the operation and the prelude helpers it uses (compose)
	SHA1   string // hex SHA-1 of Source, what EVALSHA takes

	// helpers names the prelude helpers Source defines, in the order it
	// defines them.
	helpers []string
	// origin[i] is where line i+1 of Source comes from: a line of
	// prelude.lua or of the operation's file. A line number reported by
	// Redis or by a coverage tool can so be traced back to the file it was
	// written in.
	origin []lineOrigin
	// body is the operation's file.
	body string
}

// lineOrigin is the file (the prelude, or the operation's own) and line
// that one line of a Source was copied from.
type lineOrigin struct {
	prelude bool
	line    int
}

// PreludeFile is the name of the file that holds the helpers shared by the
// scripts.
const PreludeFile = "prelude.lua"

// HelpersMark is a line an operation's file may hold once: the helper
// functions it uses are made there instead of ahead of the file, and the
// code above it, which may use the prelude's constants but none of its
// functions, runs without making them (each is a closure made on every
// call: the usual path of a script can so cost less than its others).
const HelpersMark = "-- lg:helpers"

// File reports which embedded file and which line of it produced line
// sourceLine (1-based) of s.Source: PreludeFile for the shared helpers,
// otherwise s.Name + ".lua". A line outside Source is reported as line 0
// of the operation's file.
func (s *Script) File(sourceLine int) (file string, line int) {
	if sourceLine < 1 || sourceLine > len(s.origin) {
		return s.Name + ".lua", 0
	}
	o := s.origin[sourceLine-1]
	if o.prelude {
		return PreludeFile, o.line
	}
	return s.Name + ".lua", o.line
}

// Helpers returns the names of the prelude helpers that s.Source defines,
// in the order it defines them: the ones its operation uses, directly or
// through another helper.
func (s *Script) Helpers() []string { return append([]string(nil), s.helpers...) }

// Body returns the operation's own file: Source without the helpers.
func (s *Script) Body() string { return s.body }

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
// Script.Source carries those of them it uses.
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
	s, err := compose(name, mustRead(name+".lua"), preludeHelpers)
	if err != nil {
		panic(fmt.Sprintf("lua: %s.lua: %v", name, err))
	}
	registry[name] = s
	return s
}

// compose builds the Source of the operation name from its file, body, and
// the prelude's helpers: those it uses, in prelude order, then the file;
// or, in a file with HelpersMark, the constants it uses, the file's lines
// above the mark, the functions it uses, and the rest of the file.
func compose(name, body string, all []helper) (*Script, error) {
	hs, err := helpersFor(all, body)
	if err != nil {
		return nil, err
	}
	s := &Script{Name: name, body: body}
	var src strings.Builder
	writeHelpers := func(take func(helper) bool) {
		for _, h := range hs {
			if !take(h) {
				continue
			}
			s.helpers = append(s.helpers, h.name)
			for i, l := range h.lines {
				src.WriteString(l + "\n")
				s.origin = append(s.origin, lineOrigin{prelude: true, line: h.first + i})
			}
		}
	}
	writeBody := func(part string, first int) {
		if part == "" {
			return
		}
		src.WriteString(part)
		for i := range strings.Count(strings.TrimSuffix(part, "\n"), "\n") + 1 {
			s.origin = append(s.origin, lineOrigin{line: first + i})
		}
	}
	before, after, marked, err := cutHelpersMark(body)
	if err != nil {
		return nil, err
	}
	if !marked {
		writeHelpers(func(helper) bool { return true })
		writeBody(body, 1)
	} else {
		for _, ref := range references(strings.Split(before, "\n")) {
			if strings.HasPrefix(ref, "lg_") {
				return nil, fmt.Errorf("%s above %q: only the prelude's constants are made there", ref, HelpersMark)
			}
		}
		writeHelpers(func(h helper) bool { return !h.function() })
		writeBody(before, 1)
		writeHelpers(helper.function)
		writeBody(after, strings.Count(before, "\n")+1)
	}
	s.Source = src.String()
	sum := sha1.Sum([]byte(s.Source))
	s.SHA1 = hex.EncodeToString(sum[:])
	return s, nil
}

// cutHelpersMark splits body after the line HelpersMark, if it has one:
// before holds the lines above it and the mark, after the rest.
func cutHelpersMark(body string) (before, after string, marked bool, err error) {
	i := strings.Index(body, "\n"+HelpersMark+"\n")
	if i < 0 {
		return body, "", false, nil
	}
	cut := i + len(HelpersMark) + 2
	before, after = body[:cut], body[cut:]
	if strings.Contains("\n"+after, "\n"+HelpersMark+"\n") {
		return "", "", false, fmt.Errorf("%q more than once", HelpersMark)
	}
	return before, after, true, nil
}
