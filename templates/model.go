package templates

import (
	"go/types"
	"time"
)

// File is everything generated for one package.
type File struct {
	PkgPath  string
	PkgName  string
	Imports  []Import // packages the output may refer to, with the names to use
	Wrappers []Wrapper
}

// Import fixes the name under which the output refers to a package.
type Import struct {
	Path  string
	Name  string // identifier used in the output
	Alias bool   // Name differs from the package's own name: write an alias
}

// Wrapper is the locked wrapper of one named type.
type Wrapper struct {
	TypeName   string // the wrapped type, e.g. OrderService
	Interface  bool   // the wrapped type is an interface: decorator constructor
	TypeParams []TypeParam
	Methods    []Method
}

// Name is the wrapper type's name.
func (w *Wrapper) Name() string { return w.TypeName + "Locked" }

// ConstructorName is the wrapper constructor's name.
func (w *Wrapper) ConstructorName() string { return "New" + w.TypeName + "Locked" }

// TypeParam is a type parameter of a generic wrapped type.
type TypeParam struct {
	Name       string
	Constraint types.Type
}

// Method is one method of the wrapper.
type Method struct {
	Name           string
	Recv           string   // receiver identifier
	RecvTypeParams []string // type parameter names for the receiver, one per Wrapper.TypeParams
	Params         []Var    // names already made unique
	Results        []Var    // named (unique) when Locked != nil; names may be empty otherwise
	Variadic       bool
	Locked         *Locked // nil: plain delegation
	Names          *Names  // allocator for the method's locals
}

// Var is a parameter or result.
type Var struct {
	Name string
	Type types.Type
}

// Locked describes the locking done around an annotated method.
type Locked struct {
	Locks      []Lock
	OnBusySkip bool
}

// Lock is one `key=` of one annotation.
type Lock struct {
	Kind     string // annotation kind name: mutex, fair, read, write, semaphore
	Template string // the template as written, for error messages
	Parts    []KeyPart
	Lease    time.Duration // 0: Locker default
	NoRenew  bool
	Wait     time.Duration // meaningful when HasWait
	HasWait  bool          // Wait == 0 means try once (runtime.NoWait)
	Permits  int
}

// KeyPart is literal text or a value.
type KeyPart struct {
	Literal string
	Value   *Value // nil for literal text
}

// Format says how a value becomes key text.
type Format int

// The formats; each has one rendering in key.go.
const (
	FormatString   Format = iota + 1 // runtime.EscapeKeyPart(v)
	FormatInt                        // strconv.FormatInt(int64(v), 10)
	FormatUint                       // strconv.FormatUint(uint64(v), 10)
	FormatBool                       // strconv.FormatBool(v)
	FormatText                       // runtime.EscapeText(v), error returned
	FormatStringer                   // runtime.EscapeKeyPart(v.String())
)

// Value is a placeholder resolved against the method's parameters.
type Value struct {
	Source   string // as written between < and >, for messages
	Root     string // the parameter's (possibly renamed) identifier
	Steps    []Step
	Slice    bool   // the value is a slice or array: one key per element
	Format   Format // of the value, or of each element when Slice
	Convert  bool   // convert to the format's basic type first (named types, narrower ints)
	NilCheck bool   // the value (element when Slice) is a pointer or interface whose method Format calls
	Deref    bool   // the value is a pointer to a basic type: nil-check, then format *v
}

// Step is one selector of a placeholder chain.
type Step struct {
	Name     string
	Call     bool
	NilCheck bool   // the value before this step is a pointer or interface: check it for nil first
	Display  string // the chain up to and including this step's operand, for the nil message
}
