// Command flect-plurals prints the plural kubebuilder derives for each kind
// name it reads, one "kind<TAB>plural" line per kind. It exists to produce the
// golden table that the TypeScript pluralizer is tested against, so it calls
// flect exactly the way kubebuilder does (resource.RegularPlural):
// flect.Pluralize(strings.ToLower(kind)).
//
// Input is one kind per line, from the file named by the only argument or from
// stdin. Blank lines and lines starting with '#' are skipped.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gobuffalo/flect"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "flect-plurals:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	in := stdin
	switch len(args) {
	case 0:
	case 1:
		file, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer file.Close()
		in = file
	default:
		return fmt.Errorf("usage: flect-plurals [kinds-file] (one kind per line; stdin if no file)")
	}

	out := bufio.NewWriter(stdout)
	scanner := bufio.NewScanner(in)
	for scanner.Scan() {
		kind := strings.TrimSpace(scanner.Text())
		if kind == "" || strings.HasPrefix(kind, "#") {
			continue
		}
		fmt.Fprintf(out, "%s\t%s\n", kind, flect.Pluralize(strings.ToLower(kind)))
	}
	if err := scanner.Err(); err != nil {
		return err
	}
	return out.Flush()
}
