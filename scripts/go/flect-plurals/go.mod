// Prints flect's plurals for a list of kinds, to build the golden table of
// test/fixtures/plurals/. flect v1.0.3 is the version kubebuilder v4's go.mod pins.
module ts-operator-sdk.local/scripts/go/flect-plurals

go 1.23

require github.com/gobuffalo/flect v1.0.3
