//go:build tools

// Package tools pins Temporal's server and its SQL schema tool at the version go.mod names (the
// dev server's, 1.32.0): `make temporal-cluster` builds both from the Go module proxy.
package tools

import (
	_ "go.temporal.io/server/cmd/server"
	_ "go.temporal.io/server/cmd/tools/sql"
)
