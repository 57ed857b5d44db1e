package main

import (
	"os"
	"testing"

	"github.com/nodewright/nodewright/shared/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }
