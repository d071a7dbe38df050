// Command iceberg-go-client drops a table with purge through an Iceberg REST catalog, with
// iceberg-go's own REST client (catalog/rest: PurgeTable sends purgeRequested=true): the engines
// tier's Go client of the front door.
//
//	iceberg-go-client URI TOKEN NAMESPACE TABLE
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: iceberg-go-client URI TOKEN NAMESPACE TABLE")
		os.Exit(2)
	}
	uri, token, namespace, name := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	door, err := rest.NewCatalog(ctx, "door", uri, rest.WithOAuthToken(token))
	if err != nil {
		fmt.Fprintln(os.Stderr, "connecting:", err)
		os.Exit(1)
	}
	if err := door.PurgeTable(ctx, catalog.ToIdentifier(namespace, name)); err != nil {
		fmt.Fprintln(os.Stderr, "purging:", err)
		os.Exit(1)
	}
	fmt.Println("purged", namespace, name)
}
