package main

// Which allocator features a case exercises, read from its objects (and, for the outcomes,
// from its verdicts), not from the generator's choices: the coverage test then checks what
// the output holds.

import (
	"sort"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

// allFeatures are the names caseFeatures reports; the coverage test requires every one.
var allFeatures = []string{
	"exactCount", "exactCountOver1", "allocationModeAll", "firstAvailable", "firstAvailable3",
	"classSelector", "requestSelector", "celRuntimeError",
	"matchAttribute", "distinctAttribute",
	"sharedCounters", "consumesCounters",
	"allowMultipleAllocations", "capacityRequests", "requestPolicyRange", "requestPolicyValues",
	"taintNoSchedule", "taintNoExecute", "tolerations", "bindingConditions",
	"adminAccess", "allocatedAdminAccess",
	"nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection",
	"multiSlicePool", "olderGeneration", "incompletePool", "invalidPool",
	"allocatedDevices", "allocatedShares",
	"allocatable", "notAllocatable", "someNodesOnly", "nodeError", "fatalError",
}

func addRequestFeatures(f map[string]bool, mode resourceapi.DeviceAllocationMode, count int64,
	selectors []resourceapi.DeviceSelector, tolerations []resourceapi.DeviceToleration,
	capacity *resourceapi.CapacityRequirements) {
	switch mode {
	case resourceapi.DeviceAllocationModeAll:
		f["allocationModeAll"] = true
	default:
		f["exactCount"] = true
		if count > 1 {
			f["exactCountOver1"] = true
		}
	}
	if len(selectors) > 0 {
		f["requestSelector"] = true
	}
	if len(tolerations) > 0 {
		f["tolerations"] = true
	}
	if capacity != nil && len(capacity.Requests) > 0 {
		f["capacityRequests"] = true
	}
}

// caseFeatures names what one case exercises; verdicts are the case's answers, one per node.
func caseFeatures(objects *Objects, verdicts []Verdict) map[string]bool {
	f := map[string]bool{}
	for _, class := range objects.DeviceClasses {
		if len(class.Spec.Selectors) > 0 {
			f["classSelector"] = true
		}
	}
	type poolKey struct{ driver, pool string }
	maxGeneration := map[poolKey]int64{}
	for _, slice := range objects.ResourceSlices {
		key := poolKey{slice.Spec.Driver, slice.Spec.Pool.Name}
		maxGeneration[key] = max(maxGeneration[key], slice.Spec.Pool.Generation)
	}
	type deviceKey struct {
		pool poolKey
		name string
	}
	seen := map[deviceKey]bool{}
	current := map[poolKey]int64{}
	sliceCount := map[poolKey]int64{}
	for _, slice := range objects.ResourceSlices {
		key := poolKey{slice.Spec.Driver, slice.Spec.Pool.Name}
		if slice.Spec.Pool.Generation < maxGeneration[key] {
			f["olderGeneration"] = true
			continue
		}
		current[key]++
		for _, device := range slice.Spec.Devices {
			id := deviceKey{key, device.Name}
			if seen[id] {
				f["invalidPool"] = true
			}
			seen[id] = true
		}
		sliceCount[key] = slice.Spec.Pool.ResourceSliceCount
		switch {
		case slice.Spec.NodeName != nil:
			f["nodeName"] = true
		case slice.Spec.NodeSelector != nil:
			f["nodeSelector"] = true
		case ptr.Deref(slice.Spec.AllNodes, false):
			f["allNodes"] = true
		case ptr.Deref(slice.Spec.PerDeviceNodeSelection, false):
			f["perDeviceNodeSelection"] = true
		}
		if len(slice.Spec.SharedCounters) > 0 {
			f["sharedCounters"] = true
		}
		for _, device := range slice.Spec.Devices {
			if len(device.ConsumesCounters) > 0 {
				f["consumesCounters"] = true
			}
			if ptr.Deref(device.AllowMultipleAllocations, false) {
				f["allowMultipleAllocations"] = true
			}
			for _, capacity := range device.Capacity {
				if capacity.RequestPolicy != nil && capacity.RequestPolicy.ValidRange != nil {
					f["requestPolicyRange"] = true
				}
				if capacity.RequestPolicy != nil && len(capacity.RequestPolicy.ValidValues) > 0 {
					f["requestPolicyValues"] = true
				}
			}
			for _, taint := range device.Taints {
				switch taint.Effect {
				case resourceapi.DeviceTaintEffectNoSchedule:
					f["taintNoSchedule"] = true
				case resourceapi.DeviceTaintEffectNoExecute:
					f["taintNoExecute"] = true
				}
			}
			if len(device.BindingConditions) > 0 {
				f["bindingConditions"] = true
			}
		}
	}
	for key, n := range current {
		if n > 1 {
			f["multiSlicePool"] = true
		}
		if n < sliceCount[key] {
			f["incompletePool"] = true
		}
	}
	for _, claim := range objects.AllocatedClaims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			switch {
			case ptr.Deref(result.AdminAccess, false):
				f["allocatedAdminAccess"] = true
			case result.ShareID != nil:
				f["allocatedShares"] = true
			default:
				f["allocatedDevices"] = true
			}
		}
	}
	for _, claim := range objects.ClaimsToAllocate {
		for _, request := range claim.Spec.Devices.Requests {
			if request.Exactly != nil {
				e := request.Exactly
				addRequestFeatures(f, e.AllocationMode, e.Count, e.Selectors, e.Tolerations, e.Capacity)
				if ptr.Deref(e.AdminAccess, false) {
					f["adminAccess"] = true
				}
			}
			if len(request.FirstAvailable) > 0 {
				f["firstAvailable"] = true
				if len(request.FirstAvailable) >= 3 {
					f["firstAvailable3"] = true
				}
			}
			for _, s := range request.FirstAvailable {
				addRequestFeatures(f, s.AllocationMode, s.Count, s.Selectors, s.Tolerations, s.Capacity)
			}
		}
		for _, constraint := range claim.Spec.Devices.Constraints {
			if constraint.MatchAttribute != nil {
				f["matchAttribute"] = true
			}
			if constraint.DistinctAttribute != nil {
				f["distinctAttribute"] = true
			}
		}
	}
	allocatable := 0
	for _, v := range verdicts {
		if v.Allocatable {
			allocatable++
		} else {
			f["notAllocatable"] = true
		}
		switch v.ErrorKind {
		case "node":
			f["nodeError"] = true
		case "fatal":
			f["fatalError"] = true
		}
		if strings.Contains(v.Error, "CEL runtime error") {
			f["celRuntimeError"] = true
		}
	}
	if allocatable > 0 {
		f["allocatable"] = true
		if allocatable < len(verdicts) {
			f["someNodesOnly"] = true
		}
	}
	return f
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
