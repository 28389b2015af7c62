package annotation

import "strconv"

// Error is one problem in an annotation, at a byte offset of the comment text.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	return "offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}
