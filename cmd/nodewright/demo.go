package main

import (
	"fmt"
	"io"
)

func init() {
	register("demo", command{summary: "run the local sandbox scenarios (not built yet)", run: runDemo})
}

// runDemo says plainly that the demo does not exist yet: it arrives with the provisioning issue.
func runDemo(_ []string, _ io.Reader, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "nodewright demo: the local demo does not exist yet; it arrives with end-to-end provisioning.")
	return 1
}
