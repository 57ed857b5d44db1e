package disruption

// WithFullSimulation makes Decide and Validate simulate with every bound pod of every node, as
// compactNodes would not.
func WithFullSimulation(in Input) Input {
	in.Options.fullSimulation = true
	return in
}

// WithoutMemo makes Sequence simulate every candidate again in each Decide of a tick.
func WithoutMemo(o SequenceOptions) SequenceOptions {
	o.noMemo = true
	return o
}

// WithoutReuse makes Sequence read the cluster afresh in every Decide.
func WithoutReuse(o SequenceOptions) SequenceOptions {
	o.noReuse = true
	return o
}

// WithSearchesInTurn makes multi-node run its two searches (spot-to-spot on) one after the other,
// each alone, instead of together.
func WithSearchesInTurn(in Input) Input {
	in.Options.searchesInTurn = true
	return in
}

// WithWidth makes the engine solve n simulations at a time: single-node's batches, and multi-node's
// searches with their guesses.
func WithWidth(in Input, n int) Input {
	in.Options.width = n
	return in
}
