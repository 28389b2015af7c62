package cleanup

import "strings"

// refusedReplies are the error replies with which Redis refuses a command
// as a whole, before running any of it.
var refusedReplies = []string{"NOAUTH", "WRONGPASS", "NOPERM"}

// RefusedOutright reports whether err is, or wraps, one of refusedReplies
// (a NOPERM on a command inside a script is not: the script may have
// written before it).
func RefusedOutright(err error) bool {
	for err != nil {
		word, _, _ := strings.Cut(err.Error(), " ")
		for _, r := range refusedReplies {
			if word == r {
				return true
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if RefusedOutright(inner) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
