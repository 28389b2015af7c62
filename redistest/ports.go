package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// A port stays a Server's from its start to its Close, Kill and Restart
// included. The kernel alone cannot promise that: after Kill the port is
// free until Restart binds it again, and a server that another test starts
// meanwhile (in this test binary or in another one that `go test` runs beside
// it) could get it from the kernel and answer for the killed one at its
// address. A test that killed two of three quorum servers then saw one of
// them come back to life.
//
// So every port a Server listens on (a cluster node's bus port too) is
// reserved by an exclusive flock on a file named after it, in one directory
// per user that every test process shares. The kernel releases a flock when
// its process exits, however it exits, so no reservation outlives its test
// binary. The files themselves are left in place: one empty file per port
// number ever used, reused by every later run, so no lock is ever taken on a
// file that another process is unlinking.

// portReservation holds the reservation of a Server's ports until release.
type portReservation struct {
	port  int
	files []*os.File
	once  sync.Once
}

// release gives the ports back. It is idempotent.
func (r *portReservation) release() {
	if r == nil {
		return
	}
	r.once.Do(func() {
		for _, f := range r.files {
			f.Close() // closing the only descriptor drops its flock
		}
	})
}

// portsDir is where the reservations live.
func portsDir() string {
	return filepath.Join(os.TempDir(), "lockgen-redistest-ports-"+strconv.Itoa(os.Getuid()))
}

// reservePorts reserves every port given, or none: ok is false when
// another Server, in any process, holds one of them.
func reservePorts(ports ...int) (r *portReservation, ok bool, err error) {
	dir := portsDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("redistest: port reservations: %w", err)
	}
	r = &portReservation{port: ports[0]}
	for _, port := range ports {
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			r.release()
			return nil, false, fmt.Errorf("redistest: port reservations: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			r.release()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("redistest: reserve port %d: %w", port, err)
		}
		r.files = append(r.files, f)
	}
	return r, true, nil
}

// freePort finds a loopback port that the kernel has free and no other
// Server holds, and reserves it. In cluster mode the cluster bus port
// (port+10000) must be free as well and is reserved with it.
func freePort(clusterMode bool) (*portReservation, error) {
	for attempt := 0; attempt < 50; attempt++ {
		port, err := kernelFreePort(clusterMode)
		if err != nil {
			return nil, err
		}
		if port == 0 {
			continue
		}
		ports := []int{port}
		if clusterMode {
			ports = append(ports, port+10000)
		}
		r, ok, err := reservePorts(ports...)
		if err != nil {
			return nil, err
		}
		if ok {
			return r, nil
		}
	}
	return nil, errors.New("redistest: no free loopback port (pair, for a cluster node) after 50 tries")
}

// kernelFreePort asks the kernel for a free loopback port; 0 means the one
// it gave has no free cluster bus port.
func kernelFreePort(clusterMode bool) (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	defer ln.Close()
	if !clusterMode {
		return port, nil
	}
	if port+10000 > 65535 {
		return 0, nil
	}
	bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
	if err != nil {
		return 0, nil
	}
	bus.Close()
	return port, nil
}

// ReserveAddr returns a loopback address ("127.0.0.1:port") where nothing
// listens, reserved until the test ends: no Server of any test process gets
// its port, so a dial there is refused until the test itself starts
// something on it (a program of its own, say).
func ReserveAddr(tb testing.TB) string {
	tb.Helper()
	r, err := freePort(false)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(r.release)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port))
}
