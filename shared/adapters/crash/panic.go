package crash

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// PanicError is a recovered panic turned into an error, with the stack it happened on.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.Value, e.Stack) }

// Capture, deferred, recovers a panic of the function that defers it and joins it to *err as a
// *PanicError:
//
//	func step() (err error) {
//		defer crash.Capture(&err)
//		...
//	}
func Capture(err *error) {
	if r := recover(); r != nil {
		*err = errors.Join(*err, &PanicError{Value: r, Stack: debug.Stack()})
	}
}

// Is reports whether err holds a recovered panic, and returns the first one.
func Is(err error) (*PanicError, bool) {
	var pe *PanicError
	ok := errors.As(err, &pe)
	return pe, ok
}

// Call runs f and returns its error, or its panic as a *PanicError: for work handed to a goroutine
// whose panic would otherwise end the process.
func Call(f func() error) (err error) {
	defer Capture(&err)
	return f()
}
