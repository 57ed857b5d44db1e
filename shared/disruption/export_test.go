package disruption

// WithFullSimulation makes Decide and Validate simulate with every bound pod of every node, as
// compactNodes would not.
func WithFullSimulation(in Input) Input {
	in.Options.fullSimulation = true
	return in
}
