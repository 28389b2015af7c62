package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ServerEnv names the environment variable that picks the server every
// test, example and benchmark starts: a program name on the PATH or a path,
// e.g. valkey-server or /opt/redis-7.2/bin/redis-server. Unset or empty
// means redis-server. `make test` runs the real-server suites once with it
// unset and once with valkey-server.
const ServerEnv = "LOCKGEN_REDIS_SERVER"

// defaultServer is the server started when ServerEnv is unset.
const defaultServer = "redis-server"

// InstallHint is what a caller is told when the server is not on the PATH.
const InstallHint = "install it (Debian/Ubuntu: apt-get install redis-server; Valkey on Debian 12: apt-get install -t bookworm-backports valkey-server; macOS: brew install redis valkey), or run `make test`, which installs both where it can"

// Binaries are the programs of one server distribution. Redis and Valkey
// name them alike: <name>-server and <name>-cli, in the same directory.
// Sentinels are the server binary run with --sentinel (both support it,
// and Debian packages the <name>-sentinel link separately), so they need
// no program of their own.
type Binaries struct {
	Server string // resolved path of the server, e.g. /usr/bin/valkey-server
	CLI    string // resolved path of its client, e.g. /usr/bin/valkey-cli
}

// ServerName returns the server program ServerEnv selects, unresolved.
func ServerName() string {
	if name := strings.TrimSpace(os.Getenv(ServerEnv)); name != "" {
		return name
	}
	return defaultServer
}

// cliName derives the client's name from the server's: the same directory,
// "-server" replaced by "-cli" (redis-server -> redis-cli,
// /opt/v/bin/valkey-server -> /opt/v/bin/valkey-cli).
func cliName(server string) (string, error) {
	dir, base := filepath.Split(server)
	prefix, ok := strings.CutSuffix(base, "-server")
	if !ok || prefix == "" {
		return "", fmt.Errorf("%s=%q: want a program named <name>-server (redis-server, valkey-server), so that its <name>-cli can be found beside it", ServerEnv, server)
	}
	return dir + prefix + "-cli", nil
}

// LookServer resolves the server binary ServerEnv selects.
func LookServer() (string, error) {
	name := ServerName()
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found (%s=%q): %s", name, ServerEnv, os.Getenv(ServerEnv), InstallHint)
	}
	return path, nil
}

// LookBinaries resolves the server and its client; the client is needed
// only to create a Cluster.
func LookBinaries() (Binaries, error) {
	server, err := LookServer()
	if err != nil {
		return Binaries{}, err
	}
	cli, err := cliName(ServerName())
	if err != nil {
		return Binaries{}, err
	}
	path, err := exec.LookPath(cli)
	if err != nil {
		return Binaries{}, fmt.Errorf("%s not found beside %s: %s", cli, server, InstallHint)
	}
	return Binaries{Server: server, CLI: path}, nil
}
