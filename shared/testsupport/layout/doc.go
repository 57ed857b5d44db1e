// Package layout checks the import directions of the repository's groups (shared/core, shared/adapters,
// shared/flows, shared/testsupport, functions/, cmd/, infra/): what each group may import is written
// once, in rules.go, and the package's test applies it to every Go file of the main module. The groups'
// own doc.go files say the same rules in prose.
package layout
