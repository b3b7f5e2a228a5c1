//go:build conformance

// Package conformance only names the packages of upstream OpenKruise's e2e suite (and what its test file
// imports), so that `go mod tidy` keeps their dependencies in go.mod/go.sum. The build tag keeps it out of
// every build: test/prepare.d/45-upstream-e2e.sh compiles the upstream package itself with `go test -c`.
package conformance

import (
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/openkruise/kruise/apis"
	_ "github.com/openkruise/kruise/test/e2e"
	_ "github.com/openkruise/kruise/test/e2e/apps/v1alpha1"
	_ "github.com/openkruise/kruise/test/e2e/apps/v1beta1"
	_ "github.com/openkruise/kruise/test/e2e/framework/common"
	_ "github.com/openkruise/kruise/test/e2e/policy/v1alpha1"
)
