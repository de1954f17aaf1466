package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func generateBytes(t *testing.T, seed uint64, cases int) ([]byte, *generateStats) {
	t.Helper()
	var out bytes.Buffer
	stats, err := generate(context.Background(), seed, cases, &out)
	if err != nil {
		t.Fatalf("generate --seed %d --cases %d: %v", seed, cases, err)
	}
	return out.Bytes(), stats
}

func TestGenerateIsDeterministic(t *testing.T) {
	first, _ := generateBytes(t, 7, 80)
	second, _ := generateBytes(t, 7, 80)
	if !bytes.Equal(first, second) {
		t.Fatalf("seed 7: two runs differ (%d and %d bytes)", len(first), len(second))
	}
	other, _ := generateBytes(t, 8, 80)
	if bytes.Equal(first, other) {
		t.Fatal("seeds 7 and 8 give the same bytes")
	}
	// A case depends on (seed, case) only: the first 10 cases are a prefix of the first 80.
	prefix, _ := generateBytes(t, 7, 10)
	if !bytes.HasPrefix(first, prefix) {
		t.Fatal("seed 7: the first 10 cases change when more cases are drawn")
	}
}

func TestGenerateCoversEveryFeature(t *testing.T) {
	const seed, cases = 1, 500
	_, stats := generateBytes(t, seed, cases)
	for _, name := range allFeatures {
		if stats.features[name] == 0 {
			t.Errorf("seed %d, %d cases: no case exercises %q", seed, cases, name)
		}
	}
	share := float64(stats.allocatable) / float64(stats.verdicts)
	if share < 0.3 || share > 0.7 {
		t.Errorf("seed %d, %d cases: %.1f%% of the verdicts are allocatable, want 30-70%%", seed, cases, 100*share)
	}
}

// check on generated lines gives the same lines back: the format reads what it writes.
func TestCheckReadsGeneratedCases(t *testing.T) {
	generated, _ := generateBytes(t, 3, 30)
	var out bytes.Buffer
	if err := check(context.Background(), "generated", bytes.NewReader(generated), &out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(generated, out.Bytes()) {
		t.Fatal("check of generated cases differs from generate's own verdicts")
	}
}

func TestCheckRejectsUnknownFields(t *testing.T) {
	err := check(context.Background(), "typo.json", strings.NewReader(`{"node":"n","objects":{"nodez":[]}}`), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "typo.json: case #0") || !strings.Contains(err.Error(), "nodez") {
		t.Fatalf("want an error naming the file, the case and the field, got %v", err)
	}
}

// Hand-made cases with hand-derived verdicts: one node, small pools.

func testNode() *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0", Labels: map[string]string{rackLabel: "rack-a"}}}
}

func testClass(name, expression string) *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{
			{CEL: &resourceapi.CELDeviceSelector{Expression: expression}}}}}
}

func testSlice(name, pool string, generation, count int64, devices ...resourceapi.Device) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceSliceSpec{Driver: gpuDriver, NodeName: ptr.To("node-0"),
			Pool:    resourceapi.ResourcePool{Name: pool, Generation: generation, ResourceSliceCount: count},
			Devices: devices}}
}

func testGPU(name, model string) resourceapi.Device {
	d := resourceapi.Device{Name: name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}}
	if model != "" {
		d.Attributes["model"] = stringAttr(model)
	}
	return d
}

func testClaim(name string, requests ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: requests}}}
}

func exactly(name, class string, count int64) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}}
}

func withSelector(r resourceapi.DeviceRequest, expression string) resourceapi.DeviceRequest {
	r.Exactly.Selectors = append(r.Exactly.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: expression}})
	return r
}

func allOf(name, class string) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeAll}}
}

func allocated(name string, results ...resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	claim := testClaim(name)
	claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: results}}
	return claim
}

const gpuClass = `device.driver == "gpu.example.com"`

func TestHandMadeCases(t *testing.T) {
	twoGPUs := testSlice("s", "p", 1, 1, testGPU("gpu-0", "a100"), testGPU("gpu-1", "h100"))
	tainted := testGPU("gpu-0", "a100")
	tainted.Taints = []resourceapi.DeviceTaint{{Key: "example.com/unhealthy", Effect: resourceapi.DeviceTaintEffectNoSchedule}}
	tolerating := exactly("r", "gpu", 1)
	tolerating.Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: "example.com/unhealthy", Operator: resourceapi.DeviceTolerationOpExists}}
	adminRequest := exactly("r", "gpu", 1)
	adminRequest.Exactly.AdminAccess = ptr.To(true)
	shared := resourceapi.Device{Name: "vgpu", AllowMultipleAllocations: ptr.To(true),
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}}}
	shareOf := func(memory string) resourceapi.DeviceRequest {
		r := exactly("r", "gpu", 1)
		r.Exactly.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
			"memory": resource.MustParse(memory)}}
		return r
	}
	sixtyGiUsed := allocated("used", resourceapi.DeviceRequestAllocationResult{Request: "r", Driver: gpuDriver, Pool: "p",
		Device: "vgpu", ShareID: ptr.To(types.UID("u1")), ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{
			"memory": resource.MustParse("60Gi")}})
	gpu0Used := allocated("used", resourceapi.DeviceRequestAllocationResult{Request: "r", Driver: gpuDriver, Pool: "p", Device: "gpu-0"})
	firstAvailable := resourceapi.DeviceRequest{Name: "r", FirstAvailable: []resourceapi.DeviceSubRequest{
		{Name: "big", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 3},
		{Name: "small", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
	}}

	for _, tc := range []struct {
		name      string
		slices    []*resourceapi.ResourceSlice
		allocated []*resourceapi.ResourceClaim
		claims    []*resourceapi.ResourceClaim
		want      bool
		wantError string // substring; "" for none
		wantKind  string
		wantDevs  []string // request=device, for allocatable cases
	}{
		{name: "two of two", slices: []*resourceapi.ResourceSlice{twoGPUs},
			claims: []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "gpu", 2))}, want: true,
			wantDevs: []string{"r=gpu-0", "r=gpu-1"}},
		{name: "three of two", slices: []*resourceapi.ResourceSlice{twoGPUs},
			claims: []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "gpu", 3))}},
		{name: "two claims share nothing", slices: []*resourceapi.ResourceSlice{twoGPUs},
			claims: []*resourceapi.ResourceClaim{testClaim("c0", exactly("r", "gpu", 1)), testClaim("c1", exactly("r", "gpu", 2))}},
		{name: "in use", slices: []*resourceapi.ResourceSlice{twoGPUs}, allocated: []*resourceapi.ResourceClaim{gpu0Used},
			claims: []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "gpu", 2))}},
		{name: "firstAvailable falls back", slices: []*resourceapi.ResourceSlice{twoGPUs},
			claims: []*resourceapi.ResourceClaim{testClaim("c", firstAvailable)}, want: true,
			wantDevs: []string{"r/small=gpu-0"}},
		{name: "admin access ignores use", slices: []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 1, testGPU("gpu-0", "a100"))},
			allocated: []*resourceapi.ResourceClaim{gpu0Used},
			claims:    []*resourceapi.ResourceClaim{testClaim("c", adminRequest)}, want: true, wantDevs: []string{"r=gpu-0"}},
		{name: "incomplete pool is not used",
			slices: []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 2, testGPU("gpu-0", "a100"))},
			claims: []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "gpu", 1))}},
		{name: "all devices of an incomplete pool is an error",
			slices:    []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 2, testGPU("gpu-0", "a100"))},
			claims:    []*resourceapi.ResourceClaim{testClaim("c", allOf("r", "gpu"))},
			wantError: "is currently being updated", wantKind: "fatal"},
		{name: "older generation is ignored",
			slices: []*resourceapi.ResourceSlice{testSlice("new", "p", 2, 1, testGPU("gpu-0", "a100")),
				testSlice("old", "p", 1, 1, testGPU("gpu-0", "a100"), testGPU("gpu-1", "a100"))},
			claims: []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "gpu", 2))}},
		{name: "missing attribute is a CEL runtime error",
			slices:    []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 1, testGPU("gpu-0", ""))},
			claims:    []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "a100", 1))},
			wantError: "CEL runtime error: no such key: model", wantKind: "fatal"},
		{name: "all devices: an incomplete pool of another driver is an error too",
			slices: []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 2, testGPU("gpu-0", "a100")),
				func() *resourceapi.ResourceSlice {
					nics := testSlice("n", "nics", 1, 1, resourceapi.Device{Name: "nic-0"})
					nics.Spec.Driver = nicDriver
					return nics
				}()},
			claims:    []*resourceapi.ResourceClaim{testClaim("c", allOf("r", "nic"))},
			wantError: "resource pool gpu.example.com/p is currently being updated", wantKind: "fatal"},
		{name: "a CEL error is only met where the search goes: pool a first, it fits",
			slices: []*resourceapi.ResourceSlice{testSlice("sa", "a", 1, 1, testGPU("gpu-0", "a100")),
				testSlice("sb", "b", 1, 1, testGPU("gpu-0", ""))},
			claims: []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "a100", 1))}, want: true,
			wantDevs: []string{"r=gpu-0"}},
		{name: "a CEL error is only met where the search goes: pool a first, it errors",
			slices: []*resourceapi.ResourceSlice{testSlice("sa", "a", 1, 1, testGPU("gpu-0", "")),
				testSlice("sb", "b", 1, 1, testGPU("gpu-0", "a100"))},
			claims:    []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "a100", 1))},
			wantError: "CEL runtime error", wantKind: "fatal"},
		{name: "a missing attribute domain is an empty map", slices: []*resourceapi.ResourceSlice{twoGPUs},
			claims: []*resourceapi.ResourceClaim{testClaim("c", withSelector(exactly("r", "gpu", 1),
				`!("model" in device.attributes["other.example.com"])`))}, want: true, wantDevs: []string{"r=gpu-0"}},
		{name: "a missing key of a missing domain is a CEL runtime error", slices: []*resourceapi.ResourceSlice{twoGPUs},
			claims: []*resourceapi.ResourceClaim{testClaim("c", withSelector(exactly("r", "gpu", 1),
				`device.attributes["other.example.com"].model == "a100"`))},
			wantError: "claim default/c: selector #0 on device gpu.example.com/p/gpu-0: CEL runtime error: no such key: model", wantKind: "fatal"},
		{name: "duplicate device names make the pool invalid",
			slices:    []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 1, testGPU("gpu-0", "a100"), testGPU("gpu-0", "a100"))},
			claims:    []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "gpu", 1))},
			wantError: "invalid resource pools were encountered", wantKind: "node"},
		{name: "untolerated taint", slices: []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 1, tainted)},
			claims: []*resourceapi.ResourceClaim{testClaim("c", exactly("r", "gpu", 1))}},
		{name: "tolerated taint", slices: []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 1, tainted)},
			claims: []*resourceapi.ResourceClaim{testClaim("c", tolerating)}, want: true, wantDevs: []string{"r=gpu-0"}},
		{name: "share fits", slices: []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 1, shared)},
			allocated: []*resourceapi.ResourceClaim{sixtyGiUsed},
			claims:    []*resourceapi.ResourceClaim{testClaim("c", shareOf("20Gi"))}, want: true, wantDevs: []string{"r=vgpu"}},
		{name: "share does not fit", slices: []*resourceapi.ResourceSlice{testSlice("s", "p", 1, 1, shared)},
			allocated: []*resourceapi.ResourceClaim{sixtyGiUsed},
			claims:    []*resourceapi.ResourceClaim{testClaim("c", shareOf("30Gi"))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objects := &Objects{Nodes: []*v1.Node{testNode()},
				DeviceClasses: []*resourceapi.DeviceClass{testClass("gpu", gpuClass), testClass("nic", `device.driver == "nic.example.com"`),
					testClass("a100", `device.attributes["gpu.example.com"].model == "a100"`)},
				ResourceSlices: tc.slices, AllocatedClaims: tc.allocated, ClaimsToAllocate: tc.claims}
			verdicts, err := evaluate(context.Background(), objects, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(verdicts) != 1 {
				t.Fatalf("want one verdict, got %d", len(verdicts))
			}
			v := verdicts[0]
			if v.Allocatable != tc.want || !strings.Contains(v.Error, tc.wantError) || (tc.wantError == "") != (v.Error == "") ||
				v.ErrorKind != tc.wantKind {
				line, _ := json.Marshal(v)
				t.Fatalf("want allocatable=%v error~%q kind=%q, got %s", tc.want, tc.wantError, tc.wantKind, line)
			}
			var devices []string
			for _, result := range v.Results {
				for _, d := range result.Allocation.Devices.Results {
					devices = append(devices, d.Request+"="+d.Device)
				}
			}
			if fmt.Sprint(devices) != fmt.Sprint(tc.wantDevs) {
				t.Fatalf("want devices %v, got %v", tc.wantDevs, devices)
			}
		})
	}
}

// testdata/*.json are hand-written cases in the input format, each with the verdict
// ("allocatable") its author derived by hand: check must agree.
func TestCheckHandWrittenFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.json (%v)", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var want []Verdict
		for decoder := json.NewDecoder(bytes.NewReader(data)); decoder.More(); {
			var v Verdict
			if err := decoder.Decode(&v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want = append(want, v)
		}
		var out bytes.Buffer
		if err := check(context.Background(), name, bytes.NewReader(data), &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != len(want) {
			t.Fatalf("%s: %d cases (each for one node) in, %d verdicts out", name, len(want), len(lines))
		}
		for i, line := range lines {
			var got Verdict
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
			if got.Node != want[i].Node || got.Allocatable != want[i].Allocatable {
				t.Errorf("%s: case #%d: want node %s allocatable=%v, got %s", name, i, want[i].Node, want[i].Allocatable, line)
			}
		}
	}
}
