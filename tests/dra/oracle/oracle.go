package main

// The oracle proper: one case's objects in, upstream's verdict for one node out, computed the
// way kube-scheduler 1.37's DynamicResources plugin computes it (PreFilter builds one
// allocator per pod from the allocated state, the slices and the classes; Filter calls
// Allocate once per node).

import (
	"context"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// schedulerFeatures is structured.Features as kube-scheduler 1.37 builds it with every
// feature gate at its default (dynamicresources.AllocatorFeatures over
// pkg/features/kube_features.go at v1.37.2):
//
//	DRAAdminAccess                GA, on        -> AdminAccess
//	DRAPrioritizedList            GA, on        -> PrioritizedList
//	DRAPartitionableDevices       beta, on      -> PartitionableDevices
//	DRADeviceTaints               GA, on        -> DeviceTaints
//	DRADeviceBindingConditions    beta, on   \
//	DRAResourceClaimDeviceStatus  GA, on     /  -> DeviceBindingAndStatus
//	DRAConsumableCapacity         beta, on      -> ConsumableCapacity
//	DRAFractionalCapacityRange    beta, on only with --min-compatibility-version>=1.37;
//	                              the default is 1.36 -> off
//	DRAListTypeAttributes, DRAOptionalNodeOperations, DRADerivedAttributes,
//	DRADeviceCompatibilityGroups  alpha, off
//
// With this set structured.NewAllocator picks the "incubating" implementation (the first
// whose supported features are a superset: "stable" lacks ConsumableCapacity and
// DeviceBindingAndStatus).
var schedulerFeatures = structured.Features{
	AdminAccess:            true,
	PrioritizedList:        true,
	PartitionableDevices:   true,
	DeviceTaints:           true,
	DeviceBindingAndStatus: true,
	ConsumableCapacity:     true,
}

// celCache is the cache kube-scheduler's plugin makes (dynamicresources.New): 10 entries,
// ConsumableCapacity on, ListTypeAttributes off.
var celCache = cel.NewCache(10, cel.Features{
	EnableConsumableCapacity: true,
	EnableListTypeAttributes: false,
})

// Objects are one case's API objects, each in resource.k8s.io/v1 / core/v1 JSON.
type Objects struct {
	Nodes            []*v1.Node                   `json:"nodes"`
	DeviceClasses    []*resourceapi.DeviceClass   `json:"deviceClasses"`
	ResourceSlices   []*resourceapi.ResourceSlice `json:"resourceSlices"`
	AllocatedClaims  []*resourceapi.ResourceClaim `json:"allocatedClaims"`
	ClaimsToAllocate []*resourceapi.ResourceClaim `json:"claimsToAllocate"`
}

// ClaimResult is upstream's allocation for one claim to allocate. ShareIDs are random UUIDs
// upstream; here they are replaced by "share-<claim index>-<result index>" so that the
// output is deterministic (a re-implementation should compare only whether one is set).
type ClaimResult struct {
	Claim      string                        `json:"claim"`
	Allocation *resourceapi.AllocationResult `json:"allocation"`
}

// Verdict is one output line: a case, a node and upstream's answer.
type Verdict struct {
	Seed        *uint64       `json:"seed,omitempty"`
	Case        *int          `json:"case,omitempty"`
	Node        string        `json:"node"`
	Objects     *Objects      `json:"objects"`
	Allocatable bool          `json:"allocatable"`
	Results     []ClaimResult `json:"results"`
	// ErrorKind is "" (no error), "node" (structured.ErrFailedAllocationOnNode: the pod is
	// unschedulable on this node only, e.g. an invalid pool) or "fatal" (any other error:
	// kube-scheduler aborts the whole scheduling attempt with an error status, e.g. a CEL
	// runtime error on a device the search reached).
	ErrorKind string `json:"errorKind,omitempty"`
	Error     string `json:"error"`
}

type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	names := make([]string, 0, len(l))
	for name := range l {
		names = append(names, name)
	}
	sort.Strings(names)
	classes := make([]*resourceapi.DeviceClass, 0, len(l))
	for _, name := range names {
		classes = append(classes, l[name])
	}
	return classes, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if class, ok := l[name]; ok {
		return class, nil
	}
	// What the informer lister answers.
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

// allocatedState is kube-scheduler's claimTracker.GatherAllocatedState with
// DRAConsumableCapacity on and nothing in flight (foreachAllocatedDevice in
// pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go): results with
// adminAccess take nothing; results with a shareID are shared (their consumedCapacity adds
// up per device); every other result takes its device whole.
func allocatedState(claims []*resourceapi.ResourceClaim) structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			if ptr.Deref(result.AdminAccess, false) {
				continue
			}
			id := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			if result.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, result.ShareID))
				if result.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, result.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(id)
		}
	}
	return state
}

// evaluate answers for every node of objects (or only nodeName when not empty), in the
// order of objects.Nodes.
func evaluate(ctx context.Context, objects *Objects, nodeName string) ([]Verdict, error) {
	classes := classLister{}
	for _, class := range objects.DeviceClasses {
		classes[class.Name] = class
	}
	var nodes []*v1.Node
	for _, node := range objects.Nodes {
		if nodeName == "" || node.Name == nodeName {
			nodes = append(nodes, node)
		}
	}
	if len(nodes) == 0 {
		if nodeName != "" {
			return nil, fmt.Errorf("node %q is not among objects.nodes", nodeName)
		}
		return nil, errors.New("objects.nodes is empty")
	}
	verdicts := make([]Verdict, 0, len(nodes))
	// One allocator per pod, as PreFilter does; NewAllocator's own errors are the pod's,
	// not a node's (kube-scheduler: statusError before any Filter).
	allocator, err := structured.NewAllocator(ctx, schedulerFeatures, allocatedState(objects.AllocatedClaims),
		classes, objects.ResourceSlices, celCache)
	for _, node := range nodes {
		verdict := Verdict{Node: node.Name, Objects: objects, Results: []ClaimResult{}}
		if err != nil {
			verdict.ErrorKind = "fatal"
			verdict.Error = "NewAllocator: " + err.Error()
			verdicts = append(verdicts, verdict)
			continue
		}
		allocations, allocErr := allocator.Allocate(ctx, node, objects.ClaimsToAllocate)
		switch {
		case errors.Is(allocErr, structured.ErrFailedAllocationOnNode):
			verdict.ErrorKind = "node"
			verdict.Error = allocErr.Error()
		case allocErr != nil:
			verdict.ErrorKind = "fatal"
			verdict.Error = allocErr.Error()
		case len(allocations) == len(objects.ClaimsToAllocate):
			// kube-scheduler's Filter: anything but one result per claim is "cannot allocate
			// all claims".
			verdict.Allocatable = true
			for i := range allocations {
				allocation := &allocations[i]
				for j := range allocation.Devices.Results {
					if allocation.Devices.Results[j].ShareID != nil {
						allocation.Devices.Results[j].ShareID = ptr.To(types.UID(fmt.Sprintf("share-%d-%d", i, j)))
					}
				}
				claim := objects.ClaimsToAllocate[i]
				verdict.Results = append(verdict.Results, ClaimResult{
					Claim: claim.Namespace + "/" + claim.Name, Allocation: allocation})
			}
		}
		verdicts = append(verdicts, verdict)
	}
	return verdicts, nil
}
