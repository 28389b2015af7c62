// Package lua holds the Lua scripts that do lockgen's work inside Redis, one
// embedded file per operation, and hands them out as [Script] values ready
// for EVALSHA.
//
// Full documentation of the data model and costs follows in this file.
package lua
