// composeconfig loads Compose files with compose-go, the loader `docker compose config` runs
// (schema validation, interpolation, merging, normalization), and prints the resolved project:
// the Compose check for machines without Docker's Compose plugin (tests/project/test_deployment_files.py).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: composeconfig COMPOSE_FILE...")
		os.Exit(2)
	}
	options, err := cli.NewProjectOptions(os.Args[1:], cli.WithOsEnv, cli.WithDotEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	resolved, err := project.MarshalYAML()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(resolved)
}
