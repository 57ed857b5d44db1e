package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

func init() {
	register("version", command{summary: "print the build's module version", run: runVersion})
}

func runVersion(_ []string, _ io.Reader, stdout, _ io.Writer) int {
	v := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		v = info.Main.Version
	}
	fmt.Fprintf(stdout, "nodewright %s\n", v)
	return 0
}
