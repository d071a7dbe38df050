//go:build tools

// Package tools pins fake-gcs-server, a Google Cloud Storage emulator, at the version go.mod
// names: `make fake-gcs` builds it from the Go module proxy for the GCS store's tests.
package tools

import (
	_ "github.com/fsouza/fake-gcs-server"
)
