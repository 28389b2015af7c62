package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lockgen/lockgen/internal/family"
	"github.com/lockgen/lockgen/runtime"
)

const locksUsage = `usage:
  lockgen locks ls [flags] [pattern]        list locks: kind:key, holder, lease left, waiters
  lockgen locks show [flags] LOCK...        everything Redis holds for each lock (-json)
  lockgen locks release --force LOCK...     take each lock from every holder

Flags may also come before the subcommand, or before "locks":
  lockgen -redis URL locks ls    lockgen locks -redis URL ls

LOCK is KIND:KEY as ls prints it: mutex:order:42, fair:..., rw:... (read: and
write: name the same read/write lock), semaphore:... (or sem:). KEY is the
rendered key, without the prefix and braces. pattern matches KEYs
(Redis glob: order:*). Redis: -redis URL, else $REDIS_URL, else
redis://127.0.0.1:6379; redis-sentinel://host:port[,host:port]/MASTER[/DB]
for Sentinel; a Cluster is recognised and every master scanned.
`

// locksCmd is one run of `lockgen locks`: its flags and where it writes.
type locksCmd struct {
	fs       *flag.FlagSet
	url      *string
	master   *string
	prefix   *string
	timeout  *time.Duration
	asJSON   *bool
	force    *bool
	stdout   io.Writer
	stderr   io.Writer
	sub      string
	operands []string
}

func runLocks(args []string, stdout, stderr io.Writer) int {
	args = flagsAfterSubcommand(args)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" {
		io.WriteString(stderr, locksUsage+"Flags: lockgen locks SUBCOMMAND -h\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
			return exitOK
		}
		return exitUsage
	}
	c := &locksCmd{fs: flag.NewFlagSet("lockgen locks "+args[0], flag.ContinueOnError), stdout: stdout, stderr: stderr, sub: args[0]}
	c.fs.SetOutput(stderr)
	c.fs.Usage = func() {
		io.WriteString(stderr, locksUsage+"Flags:\n")
		c.fs.PrintDefaults()
	}
	c.defineFlags(c.fs)
	if err := c.fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	c.operands = c.fs.Args()
	if msg := c.checkUsage(); msg != "" {
		fmt.Fprintf(stderr, "lockgen locks %s: %s\n", c.sub, msg)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), *c.timeout)
	defer cancel()
	conn, err := connect(ctx, c.address(), *c.master)
	if err != nil {
		fmt.Fprintf(stderr, "lockgen locks: %v\n", err)
		return exitProblems
	}
	defer conn.close()
	l := runtime.New(conn.rdb, runtime.WithKeyPrefix(*c.prefix))
	defer l.Close()
	switch c.sub {
	case "ls":
		err = c.list(ctx, conn, l)
	case "show":
		err = c.show(ctx, l)
	case "release":
		err = c.release(ctx, l)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockgen locks %s: %v\n", c.sub, err)
		return exitProblems
	}
	return exitOK
}

// defineFlags defines the flags of every subcommand on fs.
func (c *locksCmd) defineFlags(fs *flag.FlagSet) {
	c.url = fs.String("redis", "", "Redis `URL` (default $REDIS_URL, else redis://127.0.0.1:6379)")
	c.master = fs.String("sentinel-master", "", "Sentinel master `name`: -redis then names the Sentinels")
	c.prefix = fs.String("prefix", "lockgen:", "key `prefix` of the Lockers (runtime.WithKeyPrefix)")
	c.timeout = fs.Duration("timeout", 10*time.Second, "bound on the whole command")
	c.asJSON = fs.Bool("json", false, "show: print JSON")
	c.force = fs.Bool("force", false, "release: required; the holders lose the lock at their next renewal")
}

// checkUsage returns what is wrong with the command line, or "".
func (c *locksCmd) checkUsage() string {
	switch c.sub {
	case "ls":
		if len(c.operands) > 1 {
			return "want at most one pattern"
		}
	case "show", "release":
		if len(c.operands) == 0 {
			return "want at least one LOCK (KIND:KEY, e.g. mutex:order:42)"
		}
		if c.sub == "release" && !*c.force {
			return "release takes a lock from a live holder: say --force"
		}
		for _, op := range c.operands {
			if _, err := parseLockName(op); err != nil {
				return err.Error()
			}
		}
	default:
		return "unknown subcommand; want ls, show or release"
	}
	return ""
}

// address is the -redis flag, else $REDIS_URL, else the local default.
func (c *locksCmd) address() string {
	if *c.url != "" {
		return *c.url
	}
	if env := os.Getenv("REDIS_URL"); env != "" {
		return env
	}
	return "redis://127.0.0.1:6379"
}

// parseLockName reads KIND:KEY ("mutex:order:42").
func parseLockName(name string) (runtime.Lock, error) {
	kind, key, ok := strings.Cut(name, ":")
	if !ok || key == "" {
		return runtime.Lock{}, fmt.Errorf("%q: want KIND:KEY, e.g. mutex:order:42", name)
	}
	k, err := runtime.ParseKind(kind)
	if err != nil {
		return runtime.Lock{}, fmt.Errorf("%q: %w", name, err)
	}
	if strings.ContainsAny(key, "{}") {
		return runtime.Lock{}, fmt.Errorf("%q: a key has no braces (give it without the prefix and hash tag)", name)
	}
	return runtime.Lock{Kind: k, Key: key}, nil
}

// lockName is the LOCK spelling of a kind and key: read and write are the
// one read/write lock, "rw" (family.Kind.LockName).
func lockName(k runtime.Kind, key string) string {
	if f, ok := family.Named(k.String()); ok {
		return f.LockName() + ":" + key
	}
	return k.String() + ":" + key
}

func (c *locksCmd) show(ctx context.Context, l *runtime.Locker) error {
	var states []runtime.LockState
	for _, op := range c.operands {
		lk, _ := parseLockName(op) // checked by checkUsage
		st, err := l.Inspect(ctx, lk)
		if err != nil {
			return err
		}
		states = append(states, st)
	}
	if *c.asJSON {
		return writeJSON(c.stdout, states)
	}
	for i, st := range states {
		if i > 0 {
			io.WriteString(c.stdout, "\n")
		}
		writeState(c.stdout, st)
	}
	return nil
}

func (c *locksCmd) release(ctx context.Context, l *runtime.Locker) error {
	for _, op := range c.operands {
		lk, _ := parseLockName(op) // checked by checkUsage
		n, err := l.ForceRelease(ctx, lk)
		if err != nil {
			return err
		}
		name := lockName(lk.Kind, lk.Key)
		switch n {
		case 0:
			fmt.Fprintf(c.stdout, "%s: not held, nothing removed\n", name)
		case 1:
			fmt.Fprintf(c.stdout, "%s: removed 1 hold; its holder loses the lock at its next renewal\n", name)
		default:
			fmt.Fprintf(c.stdout, "%s: removed %d holds; their holders lose the lock at their next renewal\n", name, n)
		}
	}
	return nil
}
