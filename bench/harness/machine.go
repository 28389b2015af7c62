package harness

import (
	"bufio"
	"os"
	goruntime "runtime"
	"strings"
)

// Machine describes where the numbers were taken.
type Machine struct {
	CPU     string
	Cores   int
	GoVer   string
	OS      string
	RedisV  string
	Command string
}

func describeMachine() Machine {
	return Machine{CPU: cpuModel(), Cores: goruntime.NumCPU(), GoVer: goruntime.Version(), OS: goruntime.GOOS + "/" + goruntime.GOARCH}
}

// cpuModel reads the first "model name" of /proc/cpuinfo (Linux); elsewhere
// it says it does not know.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown (no /proc/cpuinfo)"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
