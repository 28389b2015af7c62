package luashim

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// scriptDirs hold every script the repository runs through the shim: the
// lock scripts and their prelude, the fencing package's scripts, and the
// protocol-1 scripts the gopherlua_test upgrade tests replay.
var scriptDirs = []string{"../lua", "../fencing", "../gopherlua_test/testdata/protocol1"}

// computedCommands lists the first arguments of redis.call that are not a
// string literal, and the commands each can name. ARGV[3] is the publish
// command; every script (directly, or through lg_args in the prelude)
// refuses anything but PUBLISH or SPUBLISH before it calls redis.call
// with it, and pub is the local it is copied into.
var computedCommands = map[string][]string{
	"ARGV[3]": {"publish", "spublish"},
	"pub":     {"publish", "spublish"},
}

// goOnlyCommands are commands the shim keeps although no script calls
// them, because Go code runs them through Server.Do, each with its reason.
// None today: Go callers (locktest, tests' setup and checks) use commands
// the scripts call too, and read the rest through Snapshot.
var goOnlyCommands = map[string]string{}

var (
	// redisCallRE finds a call and its first argument.
	redisCallRE = regexp.MustCompile(`redis\.p?call\s*\(\s*([^,)]*)`)
	// redisCallUseRE finds every mention of redis.call or redis.pcall, to
	// catch one passed around or aliased, which the scan cannot follow.
	redisCallUseRE = regexp.MustCompile(`redis\.p?call\b`)
	quotedRE       = regexp.MustCompile(`^(?:'([A-Za-z]+)'|"([A-Za-z]+)")$`)
)

// TestShimEmulatesExactlyWhatScriptsCall keeps the command table honest:
// the shim must have every command a script calls (or a script would fail
// in the shim and pass on Redis), and nothing more (a command no script
// calls is emulation nobody checks against the scripts' use).
func TestShimEmulatesExactlyWhatScriptsCall(t *testing.T) {
	called := scriptCommands(t, scriptDirs)
	if len(called) == 0 {
		t.Fatal("found no redis.call in the scripts: the scan is broken")
	}
	for name, why := range goOnlyCommands {
		called[name] = append(called[name], "Go: "+why)
	}
	for _, name := range sortedKeys(called) {
		if commands[name] == nil {
			t.Errorf("%s is called (%s) but the shim has no such command", strings.ToUpper(name), strings.Join(called[name], ", "))
		}
	}
	for _, name := range sortedKeys(commands) {
		if called[name] == nil {
			t.Errorf("the shim has %s, which no script calls: remove it, or name it in goOnlyCommands with a reason", strings.ToUpper(name))
		}
	}
}

// scriptCommands returns the lower-case names of the commands the .lua
// files in dirs call, each with the places that call it.
func scriptCommands(t *testing.T, dirs []string) map[string][]string {
	t.Helper()
	called := map[string][]string{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.lua"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no scripts in %s: %v", dir, err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(src), "\n") {
				where := filepath.Base(dir) + "/" + filepath.Base(file) + ":" + strconv.Itoa(i+1)
				for _, name := range lineCommands(t, where, stripLuaComment(line)) {
					called[name] = append(called[name], where)
				}
			}
		}
	}
	return called
}

// lineCommands returns the commands one line of script calls.
func lineCommands(t *testing.T, where, line string) []string {
	t.Helper()
	calls := redisCallRE.FindAllStringSubmatch(line, -1)
	if uses := redisCallUseRE.FindAllString(line, -1); len(uses) != len(calls) {
		t.Errorf("%s: redis.call is used other than called with its command first: %q", where, line)
	}
	var out []string
	for _, c := range calls {
		arg := strings.TrimSpace(c[1])
		if m := quotedRE.FindStringSubmatch(arg); m != nil {
			out = append(out, strings.ToLower(m[1]+m[2]))
			continue
		}
		names, ok := computedCommands[arg]
		if !ok {
			t.Errorf("%s: redis.call with the computed command %q: name the commands it can take in computedCommands", where, arg)
		}
		out = append(out, names...)
	}
	return out
}

// stripLuaComment drops a "--" comment that is not inside a string.
func stripLuaComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case quote != 0 && ch == '\\':
			i++
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '-' && i+1 < len(line) && line[i+1] == '-':
			return line[:i]
		}
	}
	return line
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
