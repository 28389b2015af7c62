package faults

import "fmt"

const childRoleEnv = "LOCKGEN_FAULTS_CHILD"

func childMain(role string) int {
	fmt.Println("unknown role", role)
	return 2
}
