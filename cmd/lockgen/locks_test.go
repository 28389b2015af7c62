package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// locks runs `lockgen locks args...` and returns its exit code and output.
func locks(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runLocks(args, &out, &errb)
	return code, out.String(), errb.String()
}

// holding takes lk on rdb as holder id and keeps it until the test ends.
func holding(t *testing.T, rdb redis.UniversalClient, id string, lk runtime.Lock) *runtime.Held {
	t.Helper()
	l := runtime.New(rdb, runtime.WithHolderIDs(func() string { return id }))
	t.Cleanup(func() { l.Close() })
	// The holder's context derives from this one, so it must outlive the
	// call; Wait bounds the call instead.
	lk.Wait = 10 * time.Second
	h, err := l.Acquire(context.Background(), lk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Release() })
	return h
}

func TestLocksLsShowRelease(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	url := "redis://" + srv.Addr
	const lease = 3 * time.Second
	hm := holding(t, rdb, "web-1:11:aa:1", runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Lease: lease})
	holding(t, rdb, "web-2:22:bb:1", runtime.Lock{Kind: runtime.Read, Key: "report:7", Lease: lease})
	holding(t, rdb, "web-3:33:cc:1", runtime.Lock{Kind: runtime.Read, Key: "report:7", Lease: lease})
	holding(t, rdb, "web-4:44:dd:1", runtime.Lock{Kind: runtime.Semaphore, Key: "export", Lease: lease, Permits: 3})

	code, out, errs := locks(t, "ls", "-redis", url)
	if code != exitOK {
		t.Fatalf("ls: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "LOCK") {
		t.Fatalf("ls printed:\n%s\nwant a header and 3 locks", out)
	}
	for i, want := range [][]string{
		{"mutex:order:42", "web-1:11:aa:1"},
		{"rw:report:7", "web-2:22:bb:1", "(+1)"},
		{"semaphore:export", "web-4:44:dd:1"},
	} {
		f := strings.Fields(lines[i+1])
		if len(f) != len(want)+2 || !slices.Equal(f[:len(want)], want) || f[len(f)-1] != "0" {
			t.Errorf("ls line %q, want %q, a lease left and 0 waiters", lines[i+1], want)
		}
		if left, err := time.ParseDuration(f[len(f)-2]); err != nil || left <= 0 || left > lease {
			t.Errorf("ls line %q: lease left %q, want in (0, %v]", lines[i+1], f[len(f)-2], lease)
		}
	}
	stats, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stats, "cmdstat_scan:") || strings.Contains(stats, "cmdstat_keys:") {
		t.Errorf("ls must list with SCAN, never KEYS:\n%s", stats)
	}
	// A pattern matches keys; REDIS_URL is the default address.
	t.Setenv("REDIS_URL", url)
	if code, out, _ := locks(t, "ls", "order:*"); code != exitOK || !strings.Contains(out, "mutex:order:42") || strings.Contains(out, "report") {
		t.Errorf("ls order:* (REDIS_URL): exit %d:\n%s", code, out)
	}

	code, out, errs = locks(t, "show", "-json", "mutex:order:42", "read:report:7")
	if code != exitOK {
		t.Fatalf("show: exit %d: %s", code, errs)
	}
	var got []jsonLock
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("show -json: %v\n%s", err, out)
	}
	fence, _ := runtime.Fence(hm.Context())
	if len(got) != 2 || got[0].Lock != "mutex:order:42" || len(got[0].Holders) != 1 ||
		got[0].Holders[0].ID != "web-1:11:aa:1" || got[0].Holders[0].Fence != fence ||
		got[0].Holders[0].LeaseLeftMS <= 0 || got[0].Holders[0].LeaseLeftMS > lease.Milliseconds() {
		t.Errorf("show -json mutex: %+v, want web-1:11:aa:1 with fence %d", got, fence)
	}
	if len(got) == 2 && (got[1].Lock != "rw:report:7" || len(got[1].Holders) != 2 || got[1].Holders[0].Side != "read") {
		t.Errorf("show -json rw: %+v, want two readers", got[1])
	}
	if code, out, _ := locks(t, "show", "mutex:order:42"); code != exitOK || !strings.Contains(out, "web-1:11:aa:1") || !strings.Contains(out, fmt.Sprint(fence)) {
		t.Errorf("show: exit %d:\n%s", code, out)
	}

	if code, _, errs := locks(t, "release", "mutex:order:42"); code != exitUsage || !strings.Contains(errs, "--force") {
		t.Errorf("release without --force: exit %d, %q", code, errs)
	}
	code, out, errs = locks(t, "release", "--force", "mutex:order:42", "rw:report:7", "fair:nobody")
	if code != exitOK || !strings.Contains(out, "mutex:order:42: removed 1 hold") ||
		!strings.Contains(out, "rw:report:7: removed 2 holds") || !strings.Contains(out, "fair:nobody: not held") {
		t.Fatalf("release --force: exit %d:\n%s%s", code, out, errs)
	}
	select {
	case <-hm.Context().Done():
	case <-time.After(lease):
		t.Fatal("the holder's context was not cancelled within its lease")
	}
	if cause := context.Cause(hm.Context()); !errors.Is(cause, runtime.ErrLockLost) {
		t.Errorf("cause %v, want ErrLockLost", cause)
	}
	if code, out, _ := locks(t, "show", "mutex:order:42"); code != exitOK || !strings.Contains(out, "not held") || !strings.Contains(out, fmt.Sprint(fence)) {
		t.Errorf("show after release: the fence floor must stay:\n%s", out)
	}
}

func TestLocksUsage(t *testing.T) {
	for _, args := range [][]string{
		nil, {"frob"}, {"show"}, {"show", "order:42"}, {"show", "mutex:"}, {"show", "mutex:{x}"},
		{"release", "--force"}, {"ls", "a", "b"},
	} {
		if code, _, errs := locks(t, args...); code != exitUsage || errs == "" {
			t.Errorf("lockgen locks %q: exit %d, %q; want usage error", args, code, errs)
		}
	}
	if code, _, errs := locks(t, "ls", "-redis", "redis://127.0.0.1:1", "-timeout", "2s"); code != exitProblems || errs == "" {
		t.Errorf("unreachable server: exit %d, %q", code, errs)
	}
}

// On a Cluster, ls scans every master.
func TestLocksLsCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	rdb := cl.Client(t)
	var keys []string
	for i := range 12 {
		key := fmt.Sprintf("job:%d", i)
		keys = append(keys, "mutex:"+key)
		holding(t, rdb, fmt.Sprintf("host:%d:ee:1", i), runtime.Lock{Kind: runtime.Mutex, Key: key, Lease: 10 * time.Second})
	}
	code, out, errs := locks(t, "ls", "-redis", cl.Addrs[0])
	if code != exitOK {
		t.Fatalf("ls: exit %d: %s", code, errs)
	}
	for _, k := range keys {
		if !strings.Contains(out, k+" ") {
			t.Errorf("ls on the Cluster lacks %s:\n%s", k, out)
		}
	}
	if code, out, _ := locks(t, "release", "--force", "-redis", cl.Addrs[1], keys[5]); code != exitOK || !strings.Contains(out, "removed 1 hold") {
		t.Errorf("release on the Cluster: exit %d: %s", code, out)
	}
}

// Through Sentinel: the URL names the Sentinels and the master.
func TestLocksSentinel(t *testing.T) {
	srv := redistest.Start(t)
	sentinel := startSentinel(t, "mymaster", srv.Addr)
	holding(t, srv.Client(t), "web-9:99:ff:1", runtime.Lock{Kind: runtime.Fair, Key: "pay:1", Lease: 10 * time.Second})
	code, out, errs := locks(t, "show", "-redis", "redis-sentinel://"+sentinel+"/mymaster", "fair:pay:1")
	if code != exitOK || !strings.Contains(out, "web-9:99:ff:1") {
		t.Fatalf("show through Sentinel: exit %d:\n%s%s", code, out, errs)
	}
	code, out, errs = locks(t, "ls", "-redis", "redis://"+sentinel, "-sentinel-master", "mymaster")
	if code != exitOK || !strings.Contains(out, "fair:pay:1") {
		t.Fatalf("ls through Sentinel (flag): exit %d:\n%s%s", code, out, errs)
	}
}

// startSentinel runs a Sentinel that monitors master under name, and
// returns its address once it knows the master.
func startSentinel(t *testing.T, name, master string) string {
	t.Helper()
	addr := redistest.ReserveAddr(t)
	host, port, _ := net.SplitHostPort(master)
	_, sport, _ := net.SplitHostPort(addr)
	conf := filepath.Join(t.TempDir(), "sentinel.conf")
	body := fmt.Sprintf("bind 127.0.0.1\nport %s\nsentinel monitor %s %s %s 1\n", sport, name, host, port)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := redistest.LookServer()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, conf, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s --sentinel: %v", bin, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	c := redis.NewSentinelClient(&redis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		got, err := c.GetMasterAddrByName(ctx, name).Result()
		cancel()
		if err == nil && len(got) == 2 {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel at %s does not know %s: %v", addr, name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// `lockgen locks` goes to the operator's tool; anything else stays the
// generator's.
func TestDispatch(t *testing.T) {
	if code := dispatch([]string{"locks"}, io.Discard, io.Discard); code != exitUsage {
		t.Errorf("lockgen locks: exit %d, want usage", code)
	}
	if code := dispatch([]string{"-o", "bad/name.go"}, io.Discard, io.Discard); code != exitUsage {
		t.Errorf("lockgen -o bad/name.go: exit %d, want the generator's usage error", code)
	}
}
