package runtime_test

// childEnv selects a child mode when the test binary re-executes itself to
// play another process.
const childEnv = "LOCKGEN_RUNTIME_CHILD"

func childMain() int { return 2 }
