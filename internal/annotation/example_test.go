package annotation_test

import (
	"fmt"

	"github.com/lockgen/lockgen/internal/annotation"
)

func ExampleParse() {
	a, errs := annotation.Parse("//lock:fair key=order:<req.OrderID> lease=10s wait=0")
	fmt.Println(len(errs), a.Kind, a.Lease, a.HasWait, a.Wait)
	for _, p := range a.Keys[0].Parts {
		if p.Placeholder != nil {
			fmt.Println("placeholder", p.Placeholder.Root, p.Placeholder.Selectors[0].Name)
		} else {
			fmt.Println("literal", p.Literal)
		}
	}

	_, errs = annotation.Parse("//lock:spin key=a")
	fmt.Println(errs[0].Offset, errs[0].Msg)
	// Output:
	// 0 fair 10s true 0s
	// literal order:
	// placeholder req OrderID
	// 7 unknown kind "spin"; want one of mutex, fair, read, write, semaphore
}
