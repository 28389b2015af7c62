package lua_test

import (
	"fmt"
	"strings"

	"github.com/lockgen/lockgen/lua"
)

// A backend loads every script once and calls it by SHA1 afterwards.
func ExampleAll() {
	for _, s := range lua.All()[:3] {
		fmt.Println(s.Name, len(s.SHA1))
	}
	// Output:
	// fair_acquire 40
	// fair_force_release 40
	// fair_heartbeat 40
}

// Scripts can be looked up by the name of their file, and a line number
// that Redis reports for a Source (in an error, say) traced back to the file
// that holds it.
func ExampleByName() {
	s, ok := lua.ByName("mutex_release")
	fmt.Println(ok, s == lua.MutexRelease)
	bodyStart := strings.Count(s.Source, "\n") - strings.Count(s.Body(), "\n") + 1
	fmt.Println(s.File(1))
	fmt.Println(s.File(bodyStart))
	fmt.Println(s.Helpers()[:2])
	// Output:
	// true true
	// prelude.lua 5
	// mutex_release.lua 1
	// [LG_TOMB LG_FLOOR_MS]
}
