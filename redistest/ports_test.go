package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reserveChildEnv makes the test binary, run again as a child, only try to
// reserve the port it names and print what happened (TestMain): another
// test process.
const reserveChildEnv = "LOCKGEN_REDISTEST_RESERVE_PORT"

// reserveChild is the child's whole run: it reserves the port v names,
// gives it back and prints whether it could.
func reserveChild(v string) int {
	port, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r, ok, err := reservePorts(port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r.release()
	fmt.Printf("reserved=%v\n", ok)
	return 0
}

// reserveFromAnotherProcess reports whether another process could reserve
// port now, as a server started by another test binary would.
func reserveFromAnotherProcess(t *testing.T, port int) bool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), reserveChildEnv+"="+strconv.Itoa(port))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	switch {
	case strings.Contains(string(out), "reserved=true"):
		return true
	case strings.Contains(string(out), "reserved=false"):
		return false
	}
	t.Fatalf("child said neither:\n%s", out)
	return false
}

// A killed server's port is no other server's until its Close, in this
// process or another: a server started meanwhile would answer for the dead
// one at its address.
func TestKilledServerKeepsItsPort(t *testing.T) {
	s := Start(t)
	s.Kill()
	if _, ok, err := reservePorts(s.Port); err != nil || ok {
		t.Fatalf("reserve the killed server's port %d in its process: ok=%v err=%v; want refused", s.Port, ok, err)
	}
	if reserveFromAnotherProcess(t, s.Port) {
		t.Fatalf("another process reserved the killed server's port %d", s.Port)
	}
	if err := s.Restart(); err != nil {
		t.Fatalf("restart on the kept port: %v", err)
	}
	s.Close()
	if !reserveFromAnotherProcess(t, s.Port) {
		t.Fatalf("port %d still reserved after Close", s.Port)
	}
}

// A cluster node's bus port is reserved with its port.
func TestClusterPortReservesBusPort(t *testing.T) {
	r, err := freePort(true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.release()
	if _, ok, err := reservePorts(r.port + 10000); err != nil || ok {
		t.Fatalf("reserve bus port %d of a reserved node: ok=%v err=%v; want refused", r.port+10000, ok, err)
	}
	r.release()
	again, ok, err := reservePorts(r.port, r.port+10000)
	if err != nil || !ok {
		t.Fatalf("reserve ports %d and %d after release: ok=%v err=%v", r.port, r.port+10000, ok, err)
	}
	again.release()
}

// ReserveAddr's address refuses dials, and no Server can take its port.
func TestReserveAddrIsClosedAndKept(t *testing.T) {
	addr := ReserveAddr(t)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("dial %s succeeded; want refused", addr)
	}
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	if reserveFromAnotherProcess(t, p) {
		t.Fatalf("another process reserved %s", addr)
	}
}
