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
	// fair_heartbeat 40
	// fair_leave 40
}

// Scripts can be looked up by the name of their file, and a line number
// that Redis reports for a Source (in an error, say) traced back to the file
// that holds it.
func ExampleByName() {
	s, ok := lua.ByName("mutex_release")
	fmt.Println(ok, s == lua.MutexRelease)
	preludeLines := strings.Count(lua.Prelude(), "\n")
	fmt.Println(s.File(2))
	fmt.Println(s.File(preludeLines + 1))
	// Output:
	// true true
	// prelude.lua 2
	// mutex_release.lua 1
}
