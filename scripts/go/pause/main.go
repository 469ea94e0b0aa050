// pause is the sandbox ("pause") image's only program for the one-node test
// cluster: it holds a pod's namespaces open and exits on SIGTERM or SIGINT.
// The cluster has no route to a public registry, so it cannot pull the
// upstream pause image; test/cluster wraps this static binary into an OCI image.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
}
