package templates

// read: the shared side of a read/write lock. It needs no fields beyond the common ones.
func init() {
	registerKind("read", kindEmitter{runtimeConst: "Read"})
}
