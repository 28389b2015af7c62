package luashim

import (
	"crypto/sha1"
	"encoding/hex"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Server is one emulated Redis server: a single keyspace and a script
// engine. It is safe for concurrent use; scripts and commands run one at a
// time under one mutex, so a script is atomic, as in Redis.
type Server struct {
	clock     Clock
	transform Transform

	mu      sync.Mutex
	data    keyspace
	scripts map[string]*script // by SHA1 hex
	engine  *engine            // created on first script run
	subs    map[string][]*subscription
	pending []message // published, not yet delivered
	// delivering is true while some goroutine drains pending; it keeps
	// deliveries in publish order without holding mu during callbacks.
	delivering bool
}

// Option configures a Server.
type Option func(*Server)

// WithTransform has Load pass every script through t before compiling it.
func WithTransform(t Transform) Option { return func(s *Server) { s.transform = t } }

// New returns an empty server that reads the time from clock (the real
// clock if nil).
func New(clock Clock, opts ...Option) *Server {
	if clock == nil {
		clock = RealClock{}
	}
	s := &Server{
		clock:   clock,
		data:    keyspace{},
		scripts: map[string]*script{},
		subs:    map[string][]*subscription{},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// sha1hex is the script identifier Redis uses.
func sha1hex(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

// Load compiles src, like SCRIPT LOAD, and returns its SHA1. name labels
// the script in ReplyError.Script and for the transform; loading the same
// source under a new name renames it. A syntax error gives a *ReplyError
// starting "ERR Error compiling script".
func (s *Server) Load(name, src string) (string, error) {
	sha := sha1hex(src)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc, ok := s.scripts[sha]; ok {
		if name != "" {
			sc.name = name
		}
		return sha, nil
	}
	sc, err := compileScript(name, src, sha, s.transform)
	if err != nil {
		return "", err
	}
	s.scripts[sha] = sc
	return sha, nil
}

// EvalSha runs a loaded script, like EVALSHA; an unknown SHA1 gives a
// *ReplyError starting "NOSCRIPT".
func (s *Server) EvalSha(sha string, keys []string, args ...string) (any, error) {
	s.mu.Lock()
	sc, ok := s.scripts[strings.ToLower(sha)]
	if !ok {
		s.mu.Unlock()
		return nil, replyErr("NOSCRIPT No matching script. Please use EVAL.")
	}
	reply, err := s.runLocked(sc, keys, args)
	s.unlockAndDeliver()
	return reply, err
}

// Eval loads src (unnamed, unless it was loaded under a name before) and
// runs it, like EVAL.
func (s *Server) Eval(src string, keys []string, args ...string) (any, error) {
	sha, err := s.Load("", src)
	if err != nil {
		return nil, err
	}
	return s.EvalSha(sha, keys, args...)
}

// Do runs one of the scripts' commands from outside any script, for test
// setup and inspection; its keys need not be declared.
func (s *Server) Do(args ...string) (any, error) {
	s.mu.Lock()
	c := s.newCall(nil, nil)
	reply := c.dispatch(args)
	s.unlockAndDeliver()
	if e, ok := reply.(*ReplyError); ok {
		return nil, e
	}
	return reply, nil
}

// KeyState is one live key as Snapshot reports it. Only the field that
// matches Type is set.
type KeyState struct {
	Key    string
	Type   string // "string", "hash", "zset"
	PTTL   int64  // milliseconds left, -1 when the key has no TTL
	String string
	Hash   map[string]string
	ZSet   []ZMember // in ZRANGE order: by score, then member
}

// ZMember is one member of a sorted set.
type ZMember struct {
	Member string
	Score  float64
}

// Snapshot returns every live key, sorted by name. Keys whose TTL has run
// out on the server's clock are left out (and deleted).
func (s *Server) Snapshot() []KeyState {
	s.mu.Lock()
	defer s.mu.Unlock()
	nowMs := s.clock.Now().UnixMilli()
	out := make([]KeyState, 0, len(s.data))
	for k, e := range s.data {
		if e.expired(nowMs) {
			delete(s.data, k)
			continue
		}
		ks := KeyState{Key: k, PTTL: -1}
		if e.expireAt != 0 {
			ks.PTTL = e.expireAt - nowMs
		}
		switch v := e.val.(type) {
		case *stringValue:
			ks.Type, ks.String = "string", v.s
		case *hashValue:
			ks.Type, ks.Hash = "hash", maps.Clone(v.values)
		case *zsetValue:
			ks.Type, ks.ZSet = "zset", slices.Clone(v.sorted)
		}
		out = append(out, ks)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// newCall starts a command (sc nil) or script run now.
func (s *Server) newCall(sc *script, keys []string) *call {
	now := s.clock.Now()
	return &call{s: s, now: now, nowMs: now.UnixMilli(), script: sc, keys: keys}
}
