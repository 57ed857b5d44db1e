// Package connect is the start every function main shares: it checks the function's environment, loads
// the AWS configuration, finds the cluster (from the environment, asking EKS only for what is unset),
// connects to its API server with the role's EKS tokens, and builds the price provider and the state
// store the function asks for. Each main (functions/*) is then a short composition root: connect, wire
// its use case from shared/, start Lambda. Nothing here decides anything; a missing or malformed
// setting is a start-up error naming every variable at fault.
package connect
