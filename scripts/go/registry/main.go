// The distribution registry, built for our own one-node test cluster and the
// e2e OLM tests (a real OCI registry they push to and pull from): upstream's
// server and command (github.com/distribution/distribution/v3/registry), with
// only the storage drivers those tests configure. Upstream's cmd/registry
// also links the Azure, GCS and S3 drivers, the CloudFront middleware, the
// pull-through proxy and three auth backends, which made 803 packages to
// compile on a fresh machine; none of them is ever configured here.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
