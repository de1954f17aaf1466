package main

// The random case generator. Each case is drawn from its own PCG stream, seeded with
// (seed, case index), so that one case can be reproduced alone and adding cases does not
// change earlier ones. Cases are small (2-3 nodes, a handful of pools, 1-2 claims) so that
// "allocatable" and "not allocatable" are both common.

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	gpuDriver = "gpu.example.com"
	nicDriver = "nic.example.com"
	// numaAttribute is in a domain of its own so that GPUs and NICs share it and a
	// matchAttribute constraint can span both drivers.
	numaAttribute = "example.com/numa"
	rackLabel     = "example.com/rack"
	adminNS       = "admin-ns"
)

// creationTime is every object's creationTimestamp: fixed, for byte-identical output.
var creationTime = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// Class selectors: by driver, by attribute (one that errors on a device without "model"),
// by capacity, by allowMultipleAllocations, by the presence of a key.
var classSpecs = []struct{ name, expression string }{
	{"gpu", `device.driver == "gpu.example.com"`},
	{"gpu-a100", `device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"`},
	{"gpu-big", `device.driver == "gpu.example.com" && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`},
	{"mig", `device.driver == "gpu.example.com" && "profile" in device.attributes["gpu.example.com"]`},
	{"shared-gpu", `device.driver == "gpu.example.com" && device.allowMultipleAllocations == true`},
	{"nic", `device.driver == "nic.example.com"`},
}

// Request selectors for GPU requests. The first errors at run time on a device without
// the "model" attribute; the others are safe on every GPU device the generator makes.
var gpuRequestSelectors = []string{
	`device.attributes["gpu.example.com"].model == "h100"`,
	`"model" in device.attributes["gpu.example.com"] && device.attributes["gpu.example.com"].model != "l4"`,
	`device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`,
	`device.attributes["example.com"].numa == 0`,
	`device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.5.0"))`,
}

type generator struct {
	rng     *rand.Rand
	caseNum int
	uids    int
	objects Objects
	// devices that exist (current generation, any pool), as candidates for allocated claims.
	wholeDevices  []deviceRef
	sharedDevices []deviceRef
}

type deviceRef struct{ driver, pool, device string }

func (g *generator) chance(p float64) bool { return g.rng.Float64() < p }
func (g *generator) pick(n int) int        { return g.rng.IntN(n) }

func (g *generator) meta(name, namespace string) metav1.ObjectMeta {
	g.uids++
	return metav1.ObjectMeta{
		Name:              name,
		Namespace:         namespace,
		UID:               types.UID(fmt.Sprintf("00000000-0000-4000-8000-%06x%06x", g.caseNum, g.uids)),
		ResourceVersion:   fmt.Sprint(g.uids),
		CreationTimestamp: creationTime,
	}
}

// generateCase draws case caseNum of seed.
func generateCase(seed uint64, caseNum int) *Objects {
	g := &generator{rng: rand.New(rand.NewPCG(seed, uint64(caseNum))), caseNum: caseNum}
	g.objects = Objects{
		Nodes:            []*v1.Node{},
		DeviceClasses:    []*resourceapi.DeviceClass{},
		ResourceSlices:   []*resourceapi.ResourceSlice{},
		AllocatedClaims:  []*resourceapi.ResourceClaim{},
		ClaimsToAllocate: []*resourceapi.ResourceClaim{},
	}
	numNodes := 2 + g.pick(2)
	for i := 0; i < numNodes; i++ {
		g.addNode(i)
	}
	for _, spec := range classSpecs {
		g.objects.DeviceClasses = append(g.objects.DeviceClasses, &resourceapi.DeviceClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
			ObjectMeta: g.meta(spec.name, ""),
			Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{
				{CEL: &resourceapi.CELDeviceSelector{Expression: spec.expression}}}},
		})
	}
	for i := 0; i < numNodes; i++ {
		g.addGPUPool(i)
		if g.chance(0.6) {
			g.addPartitionablePool(i)
		}
		if g.chance(0.6) {
			g.addSharedPool(i)
		}
	}
	g.addNICPools(numNodes)
	numAllocated := g.pick(4)
	for i := 0; i < numAllocated; i++ {
		g.addAllocatedClaim(i)
	}
	numClaims := 1
	if g.chance(0.35) {
		numClaims = 2
	}
	for i := 0; i < numClaims; i++ {
		g.addClaimToAllocate(i)
	}
	return &g.objects
}

func (g *generator) addNode(i int) {
	name := fmt.Sprintf("node-%d", i)
	rack := []string{"rack-a", "rack-b"}[g.pick(2)]
	g.objects.Nodes = append(g.objects.Nodes, &v1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: func() metav1.ObjectMeta {
			m := g.meta(name, "")
			m.Labels = map[string]string{"kubernetes.io/hostname": name, rackLabel: rack}
			return m
		}(),
	})
}

func (g *generator) slice(name, driver, pool string, generation, count int64) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
		ObjectMeta: g.meta(name, ""),
		Spec: resourceapi.ResourceSliceSpec{
			Driver: driver,
			Pool:   resourceapi.ResourcePool{Name: pool, Generation: generation, ResourceSliceCount: count},
		},
	}
}

func stringAttr(s string) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{StringValue: &s}
}
func intAttr(i int64) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{IntValue: &i} }
func versionAttr(s string) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{VersionValue: &s}
}

func memoryCapacity(q string) map[resourceapi.QualifiedName]resourceapi.DeviceCapacity {
	return map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(q)}}
}

// gpuDevice is a whole GPU: model (missing on a few, which makes the model selectors fail
// at run time), NUMA node, driver version, memory; sometimes tainted, rarely with binding
// conditions.
func (g *generator) gpuDevice(name string) resourceapi.Device {
	d := resourceapi.Device{
		Name: name,
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			numaAttribute:   intAttr(int64(g.pick(2))),
			"driverVersion": versionAttr([]string{"1.2.0", "2.0.0"}[g.pick(2)]),
		},
		Capacity: memoryCapacity([]string{"24Gi", "40Gi", "80Gi"}[g.pick(3)]),
	}
	if !g.chance(0.06) {
		d.Attributes["model"] = stringAttr([]string{"a100", "h100", "l4"}[g.pick(3)])
	}
	g.maybeTaint(&d, 0.15)
	if g.chance(0.04) {
		d.BindingConditions = []string{"example.com/attached"}
		d.BindingFailureConditions = []string{"example.com/failed"}
	}
	return d
}

func (g *generator) maybeTaint(d *resourceapi.Device, p float64) {
	if !g.chance(p) {
		return
	}
	effect := []resourceapi.DeviceTaintEffect{resourceapi.DeviceTaintEffectNoSchedule,
		resourceapi.DeviceTaintEffectNoExecute}[g.pick(2)]
	key := []string{"example.com/unhealthy", "example.com/maintenance"}[g.pick(2)]
	d.Taints = append(d.Taints, resourceapi.DeviceTaint{Key: key, Value: "true", Effect: effect})
}

// addGPUPool adds node i's whole-GPU pool: one slice or two, sometimes beside a stale
// slice of the previous generation, sometimes missing a slice (incomplete).
func (g *generator) addGPUPool(i int) {
	node := fmt.Sprintf("node-%d", i)
	pool := node + "-gpus"
	numSlices := 1 + g.pick(2)
	generation := int64(1 + g.pick(2))
	present := numSlices
	if g.chance(0.08) {
		present-- // incomplete: resourceSliceCount says one more than there is
		if present == 0 {
			present = 1
			numSlices = 2
		}
	}
	// Rarely a device name twice in the pool: the pool is invalid (never allocated from;
	// "invalid resource pools were encountered" when nothing else fits).
	duplicate := numSlices == 2 && present == 2 && g.chance(0.05)
	devIndex := 0
	for s := 0; s < present; s++ {
		slice := g.slice(fmt.Sprintf("%s-%d", pool, s), gpuDriver, pool, generation, int64(numSlices))
		slice.Spec.NodeName = ptr.To(node)
		numDevices := 1 + g.pick(2)
		if numSlices == 1 {
			numDevices++
		}
		for d := 0; d < numDevices; d++ {
			name := fmt.Sprintf("gpu-%d", devIndex)
			devIndex++
			if duplicate && s == 1 && d == 0 {
				slice.Spec.Devices = append(slice.Spec.Devices, g.gpuDevice("gpu-0"))
				continue
			}
			slice.Spec.Devices = append(slice.Spec.Devices, g.gpuDevice(name))
			g.wholeDevices = append(g.wholeDevices, deviceRef{gpuDriver, pool, name})
		}
		g.objects.ResourceSlices = append(g.objects.ResourceSlices, slice)
	}
	if generation > 1 && g.chance(0.5) {
		// The previous generation's slice, not yet deleted: ignored upstream. Its devices
		// would make more requests fit if they were counted.
		stale := g.slice(pool+"-old", gpuDriver, pool, generation-1, 1)
		stale.Spec.NodeName = ptr.To(node)
		for d := 0; d < 3; d++ {
			dev := g.gpuDevice(fmt.Sprintf("old-gpu-%d", d))
			dev.Attributes["model"] = stringAttr("a100")
			dev.Taints = nil
			stale.Spec.Devices = append(stale.Spec.Devices, dev)
		}
		g.objects.ResourceSlices = append(g.objects.ResourceSlices, stale)
	}
}

// addPartitionablePool adds node i's MIG-like GPU: a counter-set slice (a GPU's memory and
// 7 multiprocessor slices) and a device slice of partitions that consume them.
func (g *generator) addPartitionablePool(i int) {
	node := fmt.Sprintf("node-%d", i)
	pool := node + "-mig"
	count := int64(2)
	if g.chance(0.1) {
		count = 3 // incomplete
	}
	counters := g.slice(pool+"-counters", gpuDriver, pool, 1, count)
	counters.Spec.NodeName = ptr.To(node)
	counters.Spec.SharedCounters = []resourceapi.CounterSet{{
		Name: "gpu-0-counters",
		Counters: map[string]resourceapi.Counter{
			"memory":          {Value: resource.MustParse("40Gi")},
			"multiprocessors": {Value: resource.MustParse("7")},
		},
	}}
	devices := g.slice(pool+"-devices", gpuDriver, pool, 1, count)
	devices.Spec.NodeName = ptr.To(node)
	partitions := []struct {
		name, profile, memory string
		mps                   int
	}{
		{"gpu-0", "", "40Gi", 7},
		{"gpu-0-3g-0", "3g.20gb", "20Gi", 3},
		{"gpu-0-3g-1", "3g.20gb", "20Gi", 3},
		{"gpu-0-1g-0", "1g.5gb", "5Gi", 1},
	}
	numa := int64(g.pick(2))
	for _, p := range partitions {
		d := resourceapi.Device{
			Name: p.name,
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"model":         stringAttr("a100"),
				numaAttribute:   intAttr(numa),
				"driverVersion": versionAttr("2.0.0"),
			},
			Capacity: memoryCapacity(p.memory),
			ConsumesCounters: []resourceapi.DeviceCounterConsumption{{
				CounterSet: "gpu-0-counters",
				Counters: map[string]resourceapi.Counter{
					"memory":          {Value: resource.MustParse(p.memory)},
					"multiprocessors": {Value: *resource.NewQuantity(int64(p.mps), resource.DecimalSI)},
				},
			}},
		}
		if p.profile != "" {
			d.Attributes["profile"] = stringAttr(p.profile)
		}
		g.maybeTaint(&d, 0.08)
		devices.Spec.Devices = append(devices.Spec.Devices, d)
		g.wholeDevices = append(g.wholeDevices, deviceRef{gpuDriver, pool, p.name})
	}
	g.objects.ResourceSlices = append(g.objects.ResourceSlices, counters, devices)
}

// addSharedPool adds node i's shareable GPU: allowMultipleAllocations with an 80Gi memory
// capacity and a request policy (a default, and a range with a step or a list of values).
func (g *generator) addSharedPool(i int) {
	node := fmt.Sprintf("node-%d", i)
	pool := node + "-shared"
	slice := g.slice(pool, gpuDriver, pool, 1, 1)
	slice.Spec.NodeName = ptr.To(node)
	policy := &resourceapi.CapacityRequestPolicy{Default: ptr.To(resource.MustParse("10Gi"))}
	if g.chance(0.5) {
		policy.ValidRange = &resourceapi.CapacityRequestPolicyRange{
			Min: ptr.To(resource.MustParse("10Gi")), Step: ptr.To(resource.MustParse("10Gi"))}
	} else {
		policy.ValidValues = []resource.Quantity{resource.MustParse("10Gi"),
			resource.MustParse("20Gi"), resource.MustParse("40Gi")}
	}
	d := resourceapi.Device{
		Name:                     "vgpu-0",
		AllowMultipleAllocations: ptr.To(true),
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"model":         stringAttr("h100"),
			numaAttribute:   intAttr(int64(g.pick(2))),
			"driverVersion": versionAttr("2.0.0"),
		},
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
			"memory": {Value: resource.MustParse("80Gi"), RequestPolicy: policy},
		},
	}
	slice.Spec.Devices = []resourceapi.Device{d}
	g.objects.ResourceSlices = append(g.objects.ResourceSlices, slice)
	g.sharedDevices = append(g.sharedDevices, deviceRef{gpuDriver, pool, "vgpu-0"})
}

func nicDevice(name string, numa int64) resourceapi.Device {
	return resourceapi.Device{
		Name:       name,
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{numaAttribute: intAttr(numa)},
	}
}

func rackSelector(rack string) *v1.NodeSelector {
	return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: rackLabel, Operator: v1.NodeSelectorOpIn, Values: []string{rack}}},
	}}}
}

// addNICPools adds network devices shared between nodes: by node selector (a rack), for
// all nodes, or per device (each device with its own node name, selector or allNodes).
func (g *generator) addNICPools(numNodes int) {
	if g.chance(0.6) {
		rack := []string{"rack-a", "rack-b"}[g.pick(2)]
		pool := rack + "-nics"
		slice := g.slice(pool, nicDriver, pool, 1, 1)
		slice.Spec.NodeSelector = rackSelector(rack)
		if g.chance(0.3) {
			// By node name instead: matchFields on metadata.name, which takes exactly one
			// value. (A slice's selector has exactly one term: API validation; upstream
			// errors on more when it builds the allocation's node selector.)
			slice.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn,
					Values: []string{fmt.Sprintf("node-%d", g.pick(numNodes))}}}}}}
		}
		for d := 0; d < 1+g.pick(2); d++ {
			dev := nicDevice(fmt.Sprintf("nic-%d", d), int64(d%2))
			g.maybeTaint(&dev, 0.1)
			slice.Spec.Devices = append(slice.Spec.Devices, dev)
			g.wholeDevices = append(g.wholeDevices, deviceRef{nicDriver, pool, dev.Name})
		}
		g.objects.ResourceSlices = append(g.objects.ResourceSlices, slice)
	}
	if g.chance(0.5) {
		slice := g.slice("fabric", nicDriver, "fabric", 1, 1)
		slice.Spec.AllNodes = ptr.To(true)
		for d := 0; d < 1+g.pick(2); d++ {
			dev := nicDevice(fmt.Sprintf("fabric-%d", d), int64(g.pick(2)))
			slice.Spec.Devices = append(slice.Spec.Devices, dev)
			g.wholeDevices = append(g.wholeDevices, deviceRef{nicDriver, "fabric", dev.Name})
		}
		g.objects.ResourceSlices = append(g.objects.ResourceSlices, slice)
	}
	if g.chance(0.45) {
		slice := g.slice("per-device", nicDriver, "per-device", 1, 1)
		slice.Spec.PerDeviceNodeSelection = ptr.To(true)
		for d := 0; d < 2+g.pick(2); d++ {
			dev := nicDevice(fmt.Sprintf("pd-%d", d), int64(g.pick(2)))
			switch g.pick(3) {
			case 0:
				dev.NodeName = ptr.To(fmt.Sprintf("node-%d", g.pick(numNodes)))
			case 1:
				dev.AllNodes = ptr.To(true)
			default:
				dev.NodeSelector = rackSelector([]string{"rack-a", "rack-b"}[g.pick(2)])
			}
			slice.Spec.Devices = append(slice.Spec.Devices, dev)
			g.wholeDevices = append(g.wholeDevices, deviceRef{nicDriver, "per-device", dev.Name})
		}
		g.objects.ResourceSlices = append(g.objects.ResourceSlices, slice)
	}
}

func (g *generator) claim(name, namespace string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
		ObjectMeta: g.meta(name, namespace),
	}
}

// addAllocatedClaim adds a claim whose status.allocation takes 1-2 existing devices (a
// whole device, a share of a shareable device, or an adminAccess result that takes nothing).
func (g *generator) addAllocatedClaim(i int) {
	claim := g.claim(fmt.Sprintf("allocated-%d", i), "default")
	allocation := &resourceapi.AllocationResult{}
	for r := 0; r < 1+g.pick(2); r++ {
		request := fmt.Sprintf("req-%d", r)
		claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, resourceapi.DeviceRequest{
			Name: request, Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu",
				AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}})
		switch {
		case len(g.sharedDevices) > 0 && g.chance(0.35):
			ref := g.sharedDevices[g.pick(len(g.sharedDevices))]
			allocation.Devices.Results = append(allocation.Devices.Results, resourceapi.DeviceRequestAllocationResult{
				Request: request, Driver: ref.driver, Pool: ref.pool, Device: ref.device,
				ShareID: ptr.To(types.UID(fmt.Sprintf("00000000-0000-4000-9000-%06x%06x", g.caseNum, g.uids+r))),
				ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{
					"memory": resource.MustParse([]string{"20Gi", "40Gi", "60Gi"}[g.pick(3)])},
			})
		case len(g.wholeDevices) > 0:
			ref := g.wholeDevices[g.pick(len(g.wholeDevices))]
			result := resourceapi.DeviceRequestAllocationResult{
				Request: request, Driver: ref.driver, Pool: ref.pool, Device: ref.device}
			if g.chance(0.15) {
				result.AdminAccess = ptr.To(true)
				claim.Namespace = adminNS
			}
			allocation.Devices.Results = append(allocation.Devices.Results, result)
		}
	}
	claim.Status.Allocation = allocation
	g.objects.AllocatedClaims = append(g.objects.AllocatedClaims, claim)
}

func (g *generator) tolerations() []resourceapi.DeviceToleration {
	if !g.chance(0.3) {
		return nil
	}
	switch g.pick(3) {
	case 0:
		return []resourceapi.DeviceToleration{{Key: "example.com/unhealthy", Operator: resourceapi.DeviceTolerationOpExists}}
	case 1:
		return []resourceapi.DeviceToleration{{Operator: resourceapi.DeviceTolerationOpExists,
			Effect: resourceapi.DeviceTaintEffectNoSchedule}}
	default:
		return []resourceapi.DeviceToleration{{Key: "example.com/maintenance",
			Operator: resourceapi.DeviceTolerationOpEqual, Value: "true"}}
	}
}

func (g *generator) requestSelectors() []resourceapi.DeviceSelector {
	if !g.chance(0.35) {
		return nil
	}
	expr := gpuRequestSelectors[g.pick(len(gpuRequestSelectors))]
	return []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}}
}

func (g *generator) count() int64 {
	return []int64{1, 1, 1, 1, 2, 2, 3}[g.pick(7)]
}

// exactRequest draws one exactly request: a GPU class with a count (or All), a partition,
// a share with capacity requests, a NIC, or an adminAccess GPU.
func (g *generator) exactRequest(adminAllowed bool) (*resourceapi.ExactDeviceRequest, bool) {
	r := &resourceapi.ExactDeviceRequest{AllocationMode: resourceapi.DeviceAllocationModeExactCount}
	admin := false
	switch k := g.pick(100); {
	case k < 30:
		r.DeviceClassName = []string{"gpu", "gpu", "gpu-a100", "gpu-big"}[g.pick(4)]
		r.Count = g.count()
		r.Selectors = g.requestSelectors()
	case k < 40:
		r.DeviceClassName = []string{"gpu-a100", "mig", "nic", "nic"}[g.pick(4)]
		r.AllocationMode = resourceapi.DeviceAllocationModeAll
		if g.chance(0.5) {
			r.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
				Expression: `device.attributes["example.com"].numa == 1`}}}
		}
	case k < 55:
		r.DeviceClassName = "mig"
		r.Count = []int64{1, 1, 2}[g.pick(3)]
		if g.chance(0.5) {
			r.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
				Expression: `device.attributes["gpu.example.com"].profile == "3g.20gb"`}}}
		}
	case k < 70:
		r.DeviceClassName = "shared-gpu"
		r.Count = 1
		if g.chance(0.8) {
			r.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
				"memory": resource.MustParse([]string{"5Gi", "10Gi", "20Gi", "30Gi", "50Gi"}[g.pick(5)])}}
		}
	case k < 85:
		r.DeviceClassName = "nic"
		r.Count = []int64{1, 1, 2}[g.pick(3)]
	default:
		if adminAllowed {
			r.DeviceClassName = "gpu"
			r.Count = 1
			r.AdminAccess = ptr.To(true)
			admin = true
		} else {
			r.DeviceClassName = "gpu"
			r.Count = 1
		}
	}
	r.Tolerations = g.tolerations()
	return r, admin
}

// subRequests draws a firstAvailable list of 1-3 alternatives, most demanding first.
func (g *generator) subRequests() []resourceapi.DeviceSubRequest {
	n := 1 + g.pick(3)
	subs := make([]resourceapi.DeviceSubRequest, 0, n)
	for i := 0; i < n; i++ {
		exact, _ := g.exactRequest(false)
		sub := resourceapi.DeviceSubRequest{
			Name:            fmt.Sprintf("sub-%d", i),
			DeviceClassName: exact.DeviceClassName,
			Selectors:       exact.Selectors,
			AllocationMode:  exact.AllocationMode,
			Count:           exact.Count,
			Tolerations:     exact.Tolerations,
			Capacity:        exact.Capacity,
		}
		if sub.AllocationMode == resourceapi.DeviceAllocationModeExactCount && i == 0 && n > 1 {
			sub.Count++ // the preferred alternative asks for more
		}
		subs = append(subs, sub)
	}
	return subs
}

func (g *generator) addClaimToAllocate(i int) {
	claim := g.claim(fmt.Sprintf("claim-%d", i), "default")
	numRequests := 1 + g.pick(2)
	admin := false
	for r := 0; r < numRequests; r++ {
		request := resourceapi.DeviceRequest{Name: fmt.Sprintf("req-%d", r)}
		if g.chance(0.25) {
			request.FirstAvailable = g.subRequests()
		} else {
			exact, isAdmin := g.exactRequest(true)
			admin = admin || isAdmin
			request.Exactly = exact
		}
		claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, request)
	}
	// Constraints: over all requests or named ones, matching or distinct NUMA nodes.
	if g.chance(0.3) {
		constraint := resourceapi.DeviceConstraint{}
		attr := resourceapi.FullyQualifiedName(numaAttribute)
		if g.chance(0.6) {
			constraint.MatchAttribute = &attr
		} else {
			constraint.DistinctAttribute = &attr
		}
		if numRequests > 1 && g.chance(0.5) {
			constraint.Requests = []string{"req-0", "req-1"}
		}
		claim.Spec.Devices.Constraints = append(claim.Spec.Devices.Constraints, constraint)
	}
	if admin {
		// adminAccess is only admitted in a namespace labelled
		// resource.kubernetes.io/admin-access=true (API server validation, not the allocator).
		claim.Namespace = adminNS
	}
	g.objects.ClaimsToAllocate = append(g.objects.ClaimsToAllocate, claim)
}
