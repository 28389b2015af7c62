package templates

// fair: exclusive, reentrant, granted in arrival order. It needs no fields beyond the common ones.
func init() {
	registerKind("fair", kindEmitter{runtimeConst: "Fair"})
}
