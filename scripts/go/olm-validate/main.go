// Command olm-validate prints operator-framework/api's verdict on a bundle
// directory as normalized JSON, so scripts/olm-verdicts.sh can record what the
// upstream rules say about each of our broken-bundle fixtures.
//
// It runs what operator-sdk's `bundle validate` runs on a directory, minus the
// operator-registry format check (that module drags in containerd; the
// format rules are covered by our own tests instead):
//   - operator-sdk's ValidateBundleContent: supported kinds and object metadata
//     of every object that is neither the CSV nor a CRD;
//   - the api's DefaultBundleValidators (bundle, CSV, CRD);
//   - the optional validators a --select-optional selector picks, fed the same
//     objects and --optional-values operator-sdk feeds them.
//
// Usage: olm-validate [--select-optional SELECTOR] [--optional-values k=v,...] BUNDLE_DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	k8svalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// verdict is what the golden records per fixture: sorted, so the order in
// which validators run does not matter to the comparison.
type verdict struct {
	Passed   bool     `json:"passed"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

// registryV1Kinds is operator-registry v1.59's list of kinds a registry+v1
// bundle may carry (pkg/lib/bundle/supported_resources.go).
var registryV1Kinds = map[string]bool{
	"ClusterServiceVersion": true, "CustomResourceDefinition": true, "Secret": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "ConfigMap": true, "ServiceAccount": true, "Service": true, "Role": true,
	"RoleBinding": true, "PrometheusRule": true, "ServiceMonitor": true, "PodDisruptionBudget": true,
	"PriorityClass": true, "VerticalPodAutoscaler": true, "ConsoleYAMLSample": true, "ConsoleQuickStart": true,
	"ConsoleCLIDownload": true, "ConsoleLink": true, "ConsolePlugin": true, "NetworkPolicy": true,
}

// optional mirrors operator-sdk's optional validator table (names and labels).
var optional = []struct {
	labels    labels.Set
	validator interfaces.Validator
}{
	{labels.Set{"name": "operatorhubv2", "suite": "operatorframework"}, apivalidation.OperatorHubV2Validator},
	{labels.Set{"name": "capabilities", "suite": "operatorframework"}, apivalidation.StandardCapabilitiesValidator},
	{labels.Set{"name": "categories", "suite": "operatorframework"}, apivalidation.StandardCategoriesValidator},
	{labels.Set{"name": "operatorhub"}, apivalidation.OperatorHubValidator}, //nolint:staticcheck // operator-sdk still offers it
	{labels.Set{"name": "community"}, apivalidation.CommunityOperatorValidator},
	{labels.Set{"name": "alpha-deprecated-apis", "suite": "operatorframework"}, apivalidation.AlphaDeprecatedAPIsValidator},
	{labels.Set{"name": "good-practices", "suite": "operatorframework"}, apivalidation.GoodPracticesValidator},
	{labels.Set{"name": "multiarch"}, apivalidation.MultipleArchitecturesValidator},
}

func main() {
	selector := flag.String("select-optional", "", "label selector for optional validators")
	optionalValues := flag.String("optional-values", "", "k=v[,k=v] passed to the optional validators")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: olm-validate [--select-optional SELECTOR] [--optional-values k=v,...] BUNDLE_DIR")
		os.Exit(2)
	}
	out, err := validate(flag.Arg(0), *selector, *optionalValues)
	if err != nil {
		// A bundle the api cannot load: operator-sdk stops with one fatal line too.
		// The path is dropped so the golden does not depend on where the fixtures were written.
		message := strings.ReplaceAll(err.Error(), filepath.Clean(flag.Arg(0)), "<bundle>")
		out = verdict{Passed: false, Errors: []string{"load: " + message}, Warnings: []string{}}
	}
	encoded, _ := json.Marshal(out)
	fmt.Println(string(encoded))
}

func validate(dir, selector, optionalValues string) (verdict, error) {
	manifestsDir, err := manifestsDirOf(dir)
	if err != nil {
		return verdict{}, err
	}
	bundle, err := apimanifests.GetBundleFromDir(manifestsDir)
	if err != nil {
		return verdict{}, err
	}
	var results []apierrors.ManifestResult
	results = append(results, objectResult(bundle))
	results = append(results, apivalidation.BundleValidator.Validate(bundle)...)
	if bundle.CSV != nil {
		results = append(results, apivalidation.ClusterServiceVersionValidator.Validate(bundle.CSV)...)
	}
	var crds []interface{}
	for _, crd := range bundle.V1beta1CRDs {
		crds = append(crds, crd)
	}
	for _, crd := range bundle.V1CRDs {
		crds = append(crds, crd)
	}
	if len(crds) > 0 {
		results = append(results, apivalidation.CustomResourceDefinitionValidator.Validate(crds...)...)
	}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			return verdict{}, err
		}
		objs := bundle.ObjectsToValidate()
		for _, obj := range bundle.Objects {
			objs = append(objs, obj)
		}
		objs = append(objs, parseValues(optionalValues))
		for _, v := range optional {
			if sel.Matches(v.labels) {
				results = append(results, v.validator.Validate(objs...)...)
			}
		}
	}
	out := verdict{Passed: true, Errors: []string{}, Warnings: []string{}}
	for _, result := range results {
		for _, e := range result.Errors {
			out.Errors = append(out.Errors, stable(e).Error())
		}
		for _, w := range result.Warnings {
			out.Warnings = append(out.Warnings, stable(w).Error())
		}
	}
	out.Passed = len(out.Errors) == 0
	sort.Strings(out.Errors)
	sort.Strings(out.Warnings)
	return out, nil
}

// stable replaces a pointer bad value (a CRD's *bool preserveUnknownFields)
// by what it points at: Go would print a memory address, different on every
// run, and the golden must not change when nothing did.
func stable(e apierrors.Error) apierrors.Error {
	if value := reflect.ValueOf(e.BadValue); value.Kind() == reflect.Pointer && !value.IsNil() && value.Elem().Kind() != reflect.Struct {
		e.BadValue = value.Elem().Interface()
	}
	return e
}

// manifestsDirOf finds the manifests directory the way operator-sdk does:
// the annotations' manifests label, else "manifests/".
func manifestsDirOf(dir string) (string, error) {
	name := "manifests/"
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return "", err
	}
	var file struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		return "", err
	}
	if label, ok := file.Annotations["operators.operatorframework.io.bundle.manifests.v1"]; ok {
		name = label
	}
	return filepath.Join(dir, name), nil
}

// objectResult is operator-sdk's ValidateBundleContent object pass: kinds a
// registry+v1 bundle may not carry, and metadata that could not be applied
// cluster-wide without a namespace. Named after the bundle, so it reports
// like operator-sdk's merged result.
func objectResult(bundle *apimanifests.Bundle) apierrors.ManifestResult {
	result := apierrors.ManifestResult{Name: bundle.Name}
	for _, u := range bundle.Objects {
		gvk := u.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "ClusterServiceVersion" || gvk.Kind == "CustomResourceDefinition" {
			continue
		}
		if !registryV1Kinds[gvk.Kind] {
			result.Add(apierrors.ErrInvalidBundle("unsupported media type registry+v1 for bundle object", gvk))
			continue
		}
		noName := func(string, bool) []string { return nil }
		if errs := k8svalidation.ValidateObjectMetaAccessor(metav1.Object(u), false, noName, field.NewPath("metadata")); len(errs) > 0 {
			result.Add(apierrors.ErrFailedValidation(fmt.Sprintf("error validating object: %s. %v", errs.ToAggregate(), u), u.GetName()))
		}
	}
	return result
}

// parseValues turns "k=v,k2=v2" into the map operator-sdk passes to optional validators.
func parseValues(raw string) map[string]string {
	values := map[string]string{}
	for _, pair := range strings.Split(raw, ",") {
		if key, value, ok := strings.Cut(pair, "="); ok {
			values[strings.TrimSpace(key)] = strings.TrimSpace(value)
		}
	}
	return values
}
