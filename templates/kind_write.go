package templates

// write: the exclusive side of a read/write lock. It needs no fields beyond the common ones.
func init() {
	registerKind("write", kindEmitter{runtimeConst: "Write"})
}
