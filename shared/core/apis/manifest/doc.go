// Package manifest reads Nodewright's configuration from files, directories or standard input and checks
// it: the I/O half of package apis, shared by the nodewright CLI (validate, apply) and the CDK app (synth),
// so both refuse a manifest with the same messages.
package manifest
