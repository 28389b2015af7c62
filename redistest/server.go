package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startTimeout bounds how long a server may take to answer its first PING.
const startTimeout = 10 * time.Second

// Server is one server process: redis-server, or the program ServerEnv
// names (valkey-server).
type Server struct {
	Addr string // "127.0.0.1:port"
	Port int
	Dir  string // working directory (logs, cluster config)

	bin   string           // the server's program, for Restart
	args  []string         // its arguments, for Restart
	ports *portReservation // its port, kept through Kill until Close

	mu      sync.Mutex // guards the running process: Kill and Restart replace it
	proc    *process
	closed  bool
	closeMu sync.Once
}

// process is one run of redis-server on the Server's port.
type process struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	waitErr error         // its exit status, set before done is closed
}

// Start launches a redis-server for the test and stops it when the test
// ends. extraArgs are passed to redis-server as "--name value" pairs, e.g.
// Start(t, "--maxmemory", "64mb").
func Start(tb testing.TB, extraArgs ...string) *Server {
	tb.Helper()
	s, err := Launch(extraArgs...)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Launch starts a redis-server on a free loopback port and waits until it
// answers PING. The caller must Close it.
func Launch(extraArgs ...string) (*Server, error) {
	return launch(false, extraArgs)
}

func launch(clusterMode bool, extraArgs []string) (*Server, error) {
	bin, err := LookServer()
	if err != nil {
		return nil, err
	}
	// A port found free may be taken before redis-server binds it; a few
	// attempts make that race harmless.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		ports, err := freePort(clusterMode)
		if err != nil {
			return nil, err
		}
		s, err := startAt(bin, ports, clusterMode, extraArgs)
		if err == nil {
			return s, nil
		}
		ports.release()
		lastErr = err
	}
	return nil, lastErr
}

func startAt(bin string, ports *portReservation, clusterMode bool, extraArgs []string) (*Server, error) {
	port := ports.port
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--protected-mode", "yes",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log"),
	}
	if clusterMode {
		args = append(args,
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "5000",
		)
	}
	args = append(args, extraArgs...)
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, Dir: dir, bin: bin, args: args, ports: ports}
	p, err := s.run()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.proc = p
	if err := s.waitReady(p); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// run starts one redis-server process with the Server's arguments.
func (s *Server) run() (*process, error) {
	cmd := exec.Command(s.bin, s.args...)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// waitReady polls PING with a bounded deadline; it is only used at start-up,
// before any test logic runs.
func (s *Server) waitReady(p *process) error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s on port %d exited at start-up (%v); log:\n%s", filepath.Base(s.bin), s.Port, p.waitErr, s.logTail())
		default:
		}
		if conn, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond); err == nil {
			conn.SetDeadline(time.Now().Add(time.Second))
			fmt.Fprint(conn, "PING\r\n")
			line, err := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			if err == nil && strings.HasPrefix(line, "+PONG") {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s on port %d did not answer PING within %v; log:\n%s", filepath.Base(s.bin), s.Port, startTimeout, s.logTail())
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { c.Close() })
	return c
}

// Options returns go-redis options for the server, for callers that build
// their own client.
func (s *Server) Options() *redis.Options { return &redis.Options{Addr: s.Addr} }

// Kill stops the server abruptly (SIGKILL), as a crash would, and waits for
// the process to end. Its port stays reserved (no other Server gets it, see
// ports.go), so until Restart brings it back nothing answers at its address;
// Close is still safe to call afterwards.
func (s *Server) Kill() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Restart starts the server again on the same port, with the same
// arguments, after Kill or a crash, and waits until it answers PING.
// Servers keep no data on disk, so it comes back empty, as a node without
// persistence does. Clients reconnect to the same address by themselves.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("redistest: restart of the server on port %d after Close", s.Port)
	}
	select {
	case <-s.proc.done:
	default:
		return fmt.Errorf("redistest: restart of the server on port %d while it runs; Kill it first", s.Port)
	}
	p, err := s.run()
	if err != nil {
		return err
	}
	s.proc = p
	if err := s.waitReady(p); err != nil {
		p.cmd.Process.Kill()
		<-p.done
		return err
	}
	return nil
}

// Pid returns the process id of the running redis-server, for signals
// (SIGSTOP freezes the whole server, as a stalled host would).
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc.cmd.Process.Pid
}

// Close stops the server (SIGTERM, then SIGKILL after 5 s), removes its
// directory and gives its port back. It is idempotent.
func (s *Server) Close() {
	s.closeMu.Do(func() {
		s.mu.Lock()
		s.closed = true
		p := s.proc
		s.mu.Unlock()
		if p != nil {
			p.cmd.Process.Signal(os.Interrupt)
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				p.cmd.Process.Kill()
				<-p.done
			}
		}
		os.RemoveAll(s.Dir)
		s.ports.release()
	})
}

// Version returns the server's own version from INFO: valkey_version on
// Valkey (whose redis_version is the Redis release it is compatible with,
// 7.2.4 for Valkey 8), redis_version on Redis.
func (s *Server) Version(ctx context.Context) (string, error) {
	id, err := s.Identify(ctx)
	return id.Version, err
}

// Identity is what a server says it is.
type Identity struct {
	Name    string // "redis" or "valkey" (INFO server_name; Redis 7 has none)
	Version string // its own version, e.g. 7.0.15 or 8.0.1
}

func (id Identity) String() string { return id.Name + " " + id.Version }

// Identify reads the server's name and version from INFO server.
func (s *Server) Identify(ctx context.Context) (Identity, error) {
	c := redis.NewClient(s.Options())
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return Identity{}, err
	}
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	id := Identity{Name: fields["server_name"], Version: fields["valkey_version"]}
	if id.Name == "" {
		id.Name = "redis"
	}
	if id.Version == "" {
		id.Version = fields["redis_version"]
	}
	if id.Version == "" {
		return Identity{}, errors.New("no redis_version in INFO server")
	}
	return id, nil
}
