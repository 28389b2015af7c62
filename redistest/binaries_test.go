package redistest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCLINameIsDerivedFromTheServers(t *testing.T) {
	for server, want := range map[string]string{
		"redis-server":              "redis-cli",
		"valkey-server":             "valkey-cli",
		"/opt/v8/bin/valkey-server": "/opt/v8/bin/valkey-cli",
	} {
		if got, err := cliName(server); err != nil || got != want {
			t.Errorf("cliName(%q) = %q, %v; want %q", server, got, err, want)
		}
	}
	for _, bad := range []string{"redis", "-server", "/usr/bin/valkey", "valkey-server-8"} {
		if got, err := cliName(bad); err == nil || !strings.Contains(err.Error(), ServerEnv) {
			t.Errorf("cliName(%q) = %q, %v; want an error naming %s", bad, got, err, ServerEnv)
		}
	}
}

// The server a test starts is the one ServerEnv names: a Valkey run of the
// suites that silently started redis-server would prove nothing.
func TestStartedServerIsTheOneServerEnvNames(t *testing.T) {
	want := strings.TrimSuffix(filepath.Base(ServerName()), "-server")
	srv := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := srv.Identify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id.Name != want || id.Version == "" {
		t.Fatalf("%s=%q started %q; want a %s server with a version", ServerEnv, ServerName(), id, want)
	}
	bins, err := LookBinaries()
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Base(bins.CLI); got != want+"-cli" {
		t.Fatalf("client %s for server %s; want %s-cli", bins.CLI, bins.Server, want)
	}
	t.Logf("%s=%q: %s, client %s", ServerEnv, ServerName(), id, bins.CLI)
}

func TestMissingServerIsAClearError(t *testing.T) {
	t.Setenv(ServerEnv, "no-such-lockgen-server")
	_, err := Launch()
	if err == nil || !strings.Contains(err.Error(), "no-such-lockgen-server") || !strings.Contains(err.Error(), ServerEnv) {
		t.Fatalf("Launch with a missing server: %v; want an error naming it and %s", err, ServerEnv)
	}
	if _, err := LookBinaries(); err == nil {
		t.Fatal("LookBinaries found a missing server")
	}
}
