package templates

// mutex: exclusive, reentrant. It needs no fields beyond the common ones.
func init() {
	registerKind("mutex", kindEmitter{runtimeConst: "Mutex"})
}
