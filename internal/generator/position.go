package generator

import "go/token"

func positionOfFile(path string) token.Position {
	return token.Position{Filename: path, Line: 1, Column: 1}
}
