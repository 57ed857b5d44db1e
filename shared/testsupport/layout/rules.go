package layout

import (
	"strings"
)

// Module is the main module's path; imports outside it are not checked here.
const Module = "github.com/nodewright/nodewright"

// Group is where a package lives, for the import rules.
type Group string

// The groups.
const (
	Core        Group = "shared/core"
	Adapters    Group = "shared/adapters"
	Flows       Group = "shared/flows"
	TestSupport Group = "shared/testsupport"
	Functions   Group = "functions"
	CLI         Group = "cmd"
	Infra       Group = "infra"
)

// mayImport says which groups a group's non-test code may import. Test files may import anything.
var mayImport = map[Group][]Group{
	Core:        {Core},
	Adapters:    {Core, Adapters},
	Flows:       {Core, Adapters, Flows},
	Functions:   {Core, Adapters, Flows},
	Infra:       {Core, Adapters, Flows},
	CLI:         {Core, Adapters, Flows, TestSupport},
	TestSupport: {Core, Adapters, Flows, TestSupport},
}

// GroupOf returns the group of a repository-relative package directory (slash-separated), and false for
// a directory in no group (under shared/ that is itself a violation). A helper package named for the
// package it helps (its last element ends in "test", as schedulingtest) counts as test support.
func GroupOf(dir string) (Group, bool) {
	last := dir[strings.LastIndex(dir, "/")+1:]
	for _, g := range []Group{Core, Adapters, Flows, TestSupport, Functions, CLI, Infra} {
		if dir == string(g) || strings.HasPrefix(dir, string(g)+"/") {
			if strings.HasSuffix(last, "test") && g != TestSupport && dir != string(g) {
				return TestSupport, true
			}
			return g, true
		}
	}
	return "", false
}

// allowed says whether code of group from may import a package of group to.
func allowed(from, to Group) bool {
	for _, g := range mayImport[from] {
		if g == to {
			return true
		}
	}
	return false
}
