package messages

// NoOp is a well-formed event of a known kind that asks for no action. Reason says why, for the log.
type NoOp struct {
	Envelope
	Reason string `json:"-"`
}

// Kind is always NoOpKind.
func (NoOp) Kind() Kind { return NoOpKind }

// InstanceIDs is always empty: a NoOp names nothing to act on.
func (NoOp) InstanceIDs() []string { return nil }

var _ Message = NoOp{}
