// Package main is Gantry's bridge to upstream's DRA CEL library,
// k8s.io/dynamic-resource-allocation/cel, built with -buildmode=c-archive into
// libgantry_dracel.a (scripts/dra/build-cel.sh) and used from C++ through
// src/dra/device_selector.h only.
//
// Why Go: kube-scheduler's selectors are CEL with Kubernetes' own libraries (quantity,
// semver, regex, lists, sets, cel.bind), its cost limit and its error texts. Calling the
// very code kube-scheduler calls is the only way to be exact; a C++ re-implementation
// would have this library as its only oracle anyway.
//
// The boundary carries plain C types only: strings in (pointer and length, copied into Go
// at once), opaque handles out (runtime/cgo.Handle: C++ never holds a Go pointer), error
// texts as malloc'd C strings that the caller frees with free(). Every exported function
// recovers panics and reports them as an error, so that a bug in Go never unwinds into C++.
package main

/*
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// What gantry_dracel_matches returns.
enum {
	GANTRY_DRACEL_ERROR = -1,
	GANTRY_DRACEL_NO_MATCH = 0,
	GANTRY_DRACEL_MATCH = 1,
};
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime/cgo"
	"unsafe"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// features are the CEL-relevant feature gates at their Kubernetes 1.37 defaults, which is
// what kube-scheduler passes to cel.NewCache: DRAConsumableCapacity is beta and on (the
// device has allowMultipleAllocations), DRAListTypeAttributes is alpha and off.
var features = dracel.Features{
	EnableConsumableCapacity: true,
	EnableListTypeAttributes: false,
}

// device is one device as a selector sees it: the fields of resource.k8s.io/v1 Device that
// cel.Device takes, in the API's own JSON shape, plus the driver from the ResourceSlice.
type device struct {
	Driver                   string                                                    `json:"driver"`
	AllowMultipleAllocations *bool                                                     `json:"allowMultipleAllocations,omitempty"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes,omitempty"`
	Capacity                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity,omitempty"`
}

// maxInput bounds what C may pass in one string (C.GoStringN and C.GoBytes take a C int).
const maxInput = math.MaxInt32

// goBytes copies n bytes from C memory into Go memory.
func goBytes(p *C.char, n C.size_t) ([]byte, error) {
	if n > maxInput {
		return nil, fmt.Errorf("input of %d bytes is over the limit of %d", n, maxInput)
	}
	if n == 0 {
		return nil, nil
	}
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
}

// setError stores msg for the caller, who frees it with free(); a null errOut drops it.
func setError(errOut **C.char, msg string) {
	if errOut != nil {
		*errOut = C.CString(msg)
	}
}

// recoverTo turns a panic in the calling exported function into an error for C.
func recoverTo(errOut **C.char, what string) {
	if r := recover(); r != nil {
		setError(errOut, fmt.Sprintf("internal error in %s: %v", what, r))
	}
}

// gantry_dracel_compile compiles a device selector as kube-scheduler does
// (cel.Cache.GetOrCompile: the stored-expressions environment, no cost estimate; the
// runtime cost limit applies at evaluation). On success it stores a handle in *out and
// returns 0; otherwise it returns -1 and upstream's error text in *errOut.
//
//export gantry_dracel_compile
func gantry_dracel_compile(expr *C.char, n C.size_t, out *C.uintptr_t, errOut **C.char) (rc C.int) {
	rc = -1
	defer recoverTo(errOut, "compile")
	expression, err := goBytes(expr, n)
	if err != nil {
		setError(errOut, "expression: "+err.Error())
		return -1
	}
	result := dracel.GetCompiler(features).CompileCELExpression(string(expression),
		dracel.Options{DisableCostEstimation: true})
	if result.Error != nil {
		setError(errOut, result.Error.Error())
		return -1
	}
	*out = C.uintptr_t(cgo.NewHandle(&result))
	return 0
}

// gantry_dracel_validate checks a selector as the API server does when a DeviceClass,
// ResourceClaim or ResourceClaimTemplate is created (validateCELExpression in
// k8s.io/kubernetes/pkg/apis/resource/validation): the length limit, the new-expressions
// environment, and the estimated worst-case cost against CELSelectorExpressionMaxCost.
// Returns 0 when the API server would accept it, else -1 and the field error's text
// (without the field path, which the caller knows) in *errOut.
//
//export gantry_dracel_validate
func gantry_dracel_validate(expr *C.char, n C.size_t, errOut **C.char) (rc C.int) {
	rc = -1
	defer recoverTo(errOut, "validate")
	text, err := goBytes(expr, n)
	if err != nil {
		setError(errOut, "expression: "+err.Error())
		return -1
	}
	expression := string(text)
	var path *field.Path
	if len(expression) > resourceapi.CELSelectorExpressionMaxLength {
		setError(errOut, field.TooLong(path, "", resourceapi.CELSelectorExpressionMaxLength).ErrorBody())
		return -1
	}
	envType := environment.NewExpressions
	result := dracel.GetCompiler(features).CompileCELExpression(expression, dracel.Options{EnvType: &envType})
	if result.Error != nil {
		setError(errOut, field.Invalid(path, expression, result.Error.Detail).ErrorBody())
		return -1
	}
	if result.MaxCost > resourceapi.CELSelectorExpressionMaxCost {
		setError(errOut, field.Forbidden(path, "too complex, exceeds cost limit").ErrorBody())
		return -1
	}
	return 0
}

// gantry_dracel_device decodes a device (JSON, see device above; unknown fields are an
// error) once, so that evaluations against it need no decoding. Returns 0 and a handle in
// *out, or -1 and the decoding error in *errOut.
//
//export gantry_dracel_device
func gantry_dracel_device(js *C.char, n C.size_t, out *C.uintptr_t, errOut **C.char) (rc C.int) {
	rc = -1
	defer recoverTo(errOut, "device")
	text, err := goBytes(js, n)
	if err != nil {
		setError(errOut, "device: "+err.Error())
		return -1
	}
	decoder := json.NewDecoder(bytes.NewReader(text))
	decoder.DisallowUnknownFields()
	var d device
	if err := decoder.Decode(&d); err != nil {
		setError(errOut, "device: "+err.Error())
		return -1
	}
	if decoder.More() {
		setError(errOut, "device: more than one JSON value")
		return -1
	}
	*out = C.uintptr_t(cgo.NewHandle(&dracel.Device{
		Driver:                   d.Driver,
		AllowMultipleAllocations: d.AllowMultipleAllocations,
		Attributes:               d.Attributes,
		Capacity:                 d.Capacity,
	}))
	return 0
}

// gantry_dracel_matches evaluates a compiled selector against a device as kube-scheduler's
// allocator does (CompilationResult.DeviceMatches, then cel.EnhanceRuntimeError on an
// error). Returns GANTRY_DRACEL_MATCH, GANTRY_DRACEL_NO_MATCH, or GANTRY_DRACEL_ERROR with
// the runtime error in *errOut.
//
//export gantry_dracel_matches
func gantry_dracel_matches(selector, dev C.uintptr_t, errOut **C.char) (rc C.int) {
	rc = C.GANTRY_DRACEL_ERROR
	defer recoverTo(errOut, "matches")
	compiled := cgo.Handle(selector).Value().(*dracel.CompilationResult)
	d := cgo.Handle(dev).Value().(*dracel.Device)
	matches, _, err := compiled.DeviceMatches(context.Background(), *d)
	if err != nil {
		setError(errOut, dracel.EnhanceRuntimeError(err).Error())
		return C.GANTRY_DRACEL_ERROR
	}
	if matches {
		return C.GANTRY_DRACEL_MATCH
	}
	return C.GANTRY_DRACEL_NO_MATCH
}

// gantry_dracel_release frees a handle from gantry_dracel_compile or gantry_dracel_device.
// Releasing 0 does nothing.
//
//export gantry_dracel_release
func gantry_dracel_release(h C.uintptr_t) {
	defer func() { _ = recover() }()
	if h != 0 {
		cgo.Handle(h).Delete()
	}
}

func main() {}
