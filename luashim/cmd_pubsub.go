package luashim

// PUBLISH and SPUBLISH. The shim has no cluster, so both reach every
// Subscribe callback of the channel; the channel counts as a key for the
// strictness checks, because Redis Cluster 7 requires a shard channel
// SPUBLISHed from a script to be declared (and in the script's slot).
func init() {
	run := func(c *call, args []string) any { return c.s.publish(args[1], args[2]) }
	register(keyCommand("publish", 3, run), keyCommand("spublish", 3, run))
}
