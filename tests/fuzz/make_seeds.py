#!/usr/bin/env python3
"""Writes each harness's seed corpus (tests/fuzz/NAME/corpus/) from the shipped files:
data/, tests/scenario/, deploy/, tests/validate/, plus a few hand-made inputs for what
no shipped file has (nodes, bound pods, event streams). Run it again after those files
change; the corpus is committed so that a build needs no Python.

    python3 tests/fuzz/make_seeds.py        (needs PyYAML)
"""
import glob
import json
import os
import re
import shutil

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ = os.path.join(ROOT, "tests", "fuzz")


def rel(path):
    return os.path.relpath(path, ROOT)


def seed_name(path):
    return rel(path).replace("/", "_")


class Corpus:
    def __init__(self, harness, max_len):
        self.dir = os.path.join(FUZZ, harness, "corpus")
        self.max_len = max_len
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def add(self, name, data):
        if isinstance(data, str):
            data = data.encode()
        if len(data) > self.max_len:
            return
        with open(os.path.join(self.dir, name), "wb") as f:
            f.write(data)

    def add_file(self, path, lines=None):
        with open(path, "rb") as f:
            data = f.read()
        if lines is not None:
            data = b"".join(data.splitlines(keepends=True)[:lines])
        self.add(seed_name(path), data)


def files(*patterns):
    out = []
    for p in patterns:
        out += sorted(glob.glob(os.path.join(ROOT, p), recursive=True))
    return out


def yaml_documents(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def manifest_documents():
    """(path, index, document) of every shipped manifest that PyYAML can read."""
    for path in files("deploy/**/*.yaml", "tests/validate/invalid/*.yaml"):
        try:
            docs = yaml_documents(path)
        except (yaml.YAMLError, RecursionError):  # the invalid files include deep nesting
            continue
        for i, doc in enumerate(docs):
            yield path, i, doc


# ---------------------------------------------------------------- quantities
q = Corpus("quantity", 128)
for i, text in enumerate([
        "1", "0", "500m", "1.5", ".5", "+3", "-2", "64Gi", "1Ki", "8Ei", "2e3", "1E-2", "1n",
        "100u", "1k", "3M", "4G", "5T", "6P", "7E", "0.0005", "1e-9", "12Mi", "1.25Gi",
        "9223372036854775807m", "9223372036854775807", "-9223372036854775808m", "4294967297",
        "1 2", "9223372036854775807m 1m", "-1 9223372036854775807m", "0.5 0.5", "64Gi 2Ki"]):
    q.add("q%02d" % i, text)

# ---------------------------------------------------------------- scenarios
scenario = Corpus("scenario", 16384)
schedule = Corpus("schedule", 8192)
for path in files("tests/scenario/*.yaml", "tests/scenario/invalid/*.yaml"):
    scenario.add_file(path)
for path in files("tests/scenario/*.yaml"):
    schedule.add_file(path)
# Anchors and aliases (no shipped scenario has them): what alias bombs grow from.
aliases = """name: aliases
nodes:
  - &node {namePrefix: gpu-, count: 2, allocatable: &alloc {cpu: "64", memory: 512Gi}, gpus: {count: 8, model: A100}}
  - {namePrefix: cpu-, count: 1, allocatable: *alloc}
queues:
  - {name: team-a, weight: 2}
jobs:
  - name: j
    queue: team-a
    tasks: &tasks
      - {role: w, replicas: 2, requests: {cpu: "8", nvidia.com/gpu: 4}}
  - {name: k, minMember: 2, tasks: *tasks}
"""
scenario.add("hand_aliases.yaml", aliases)
schedule.add("hand_aliases.yaml", aliases)
# DRA beyond the shipped scenario: a partitionable GPU (shared counters), a shared device
# (consumable capacity), a tainted device and a claim with firstAvailable, all without CEL
# (the fuzz build has none).
dra = """name: dra-shapes
nodes:
  - {name: n0, allocatable: {cpu: "16", memory: 64Gi}}
  - {name: n1, allocatable: {cpu: "16", memory: 64Gi}}
dra:
  objects:
    - {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}, spec: {}}
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: n0-counters}
      spec:
        driver: gpu.example.com
        pool: {name: n0, generation: 1, resourceSliceCount: 2}
        nodeName: n0
        sharedCounters: [{name: gpu-0, counters: {memory: {value: 40Gi}}}]
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: n0-devices}
      spec:
        driver: gpu.example.com
        pool: {name: n0, generation: 1, resourceSliceCount: 2}
        nodeName: n0
        devices:
          - name: gpu-0-half-a
            attributes: {index: {int: 0}}
            consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 20Gi}}}]
          - name: gpu-0-half-b
            consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 20Gi}}}]
          - name: gpu-0-whole
            consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}}}]
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: n1-devices}
      spec:
        driver: gpu.example.com
        pool: {name: n1, generation: 1, resourceSliceCount: 1}
        nodeName: n1
        devices:
          - name: shared
            allowMultipleAllocations: true
            capacity: {cores: {value: "1000"}}
          - name: tainted
            taints: [{key: broken, value: "yes", effect: NoSchedule}]
    - apiVersion: resource.k8s.io/v1
      kind: ResourceClaim
      metadata: {name: half, namespace: ml}
      spec:
        devices:
          requests:
            - name: gpu
              firstAvailable:
                - {name: whole, deviceClassName: gpu, count: 2}
                - {name: one, deviceClassName: gpu}
    - apiVersion: resource.k8s.io/v1
      kind: ResourceClaim
      metadata: {name: share, namespace: ml}
      spec:
        devices:
          requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                capacity: {requests: {cores: "250"}}
                tolerations: [{key: broken, operator: Exists, effect: NoSchedule}]
jobs:
  - {name: a, tasks: [{namespace: ml, requests: {cpu: "1"}, claims: [half]}]}
  - {name: b, tasks: [{namespace: ml, requests: {cpu: "1"}, claims: [share]}]}
"""
scenario.add("hand_dra_shapes.yaml", dra)
schedule.add("hand_dra_shapes.yaml", dra)

# ---------------------------------------------------------------- CSVs
node_csv = Corpus("node_csv", 4096)
for path in files("data/*/openb_node_list_*.csv"):
    node_csv.add_file(path, lines=12)
node_csv.add("hand_cpu_and_gpu", "sn,cpu_milli,memory_mib,gpu,model\n"
             "n0,64000,262144,8,A100\ncpu-0,32000,131072,0,\nn1,96000,786432,2,V100M32\r\n")

pod_csv = Corpus("pod_csv", 4096)
for path in files("data/*/openb_pod_list_default.csv", "data/*/openb_pod_list_multigpu20.csv",
                  "data/*/openb_pod_list_gpuspec10.csv", "data/*/openb_pod_list_gpushare20.csv",
                  "data/*/openb_pod_list_cpu050.csv"):
    pod_csv.add_file(path, lines=12)
pod_csv.add("hand_long", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
            "creation_time,deletion_time,scheduled_time\n"
            "p0,12000,16384,1,1000,V100M16|V100M32,LS,Running,0,12537496,0\n"
            "p1,6000,12288,1,460,,BE,Pending,427061,,\n"
            "p2,8000,32768,8,1000,A100,LS,Succeeded,5,10,6\n")

job_csv = Corpus("job_csv", 4096)
job_csv.add("hand_all_columns",
            "submit_time,duration,pods,gpus_per_pod,gpu_fraction,cpu,memory,queue,name,priority,"
            "min_member,gpu_model\n"
            "0,3600,4,8,,32,256Gi,team-a,train-1,10,4,A100-80GB|H100\n"
            "60,600,1,0,0.5,4,16Gi,,notebook,,1,\n"
            "120,0,2,1,,500m,2Gi,team-b,,-5,1,\n")
job_csv.add("hand_required_only", "submit_time,duration,gpus_per_pod,cpu,memory\n0,60,1,4,16Gi\n")
job_csv.add("hand_reordered", "memory,cpu,gpus_per_pod,duration,submit_time\n16Gi,4,1,60,5\n")

# ---------------------------------------------------------------- Kubernetes objects
objects = Corpus("k8s_objects", 8192)
for path, i, doc in manifest_documents():
    objects.add("%s.%d.json" % (seed_name(path), i), json.dumps(doc, default=str))


def node(name, gpus, cpu="64", memory="512Gi", labels=None, **spec):
    meta = {"name": name, "uid": "uid-" + name, "resourceVersion": "1",
            "labels": labels if labels is not None else {
                "nvidia.com/gpu.product": "A100-SXM4-80GB", "nvidia.com/gpu.memory": "81920"}}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110",
                                       "nvidia.com/gpu": str(gpus)}}}


def pod(name, gpus=0, scheduler="gantry", node_name=None, annotations=None, labels=None,
        phase="Pending", cpu="4", **spec):
    meta = {"name": name, "namespace": "ml", "uid": "uid-" + name, "resourceVersion": "1"}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    requests = {"cpu": cpu, "memory": "16Gi"}
    if gpus:
        requests["nvidia.com/gpu"] = gpus
    s = {"schedulerName": scheduler,
         "containers": [{"name": "c", "resources": {"requests": requests}}]}
    if node_name:
        s["nodeName"] = node_name
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s,
            "status": {"phase": phase}}


def volcano_group(name, min_member, queue="", **spec):
    s = {"minMember": min_member}
    if queue:
        s["queue"] = queue
    s.update(spec)
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ml", "uid": "uid-pg-" + name}, "spec": s}


def queue(name, weight=1, capability=None, guarantee=None):
    s = {"weight": weight}
    if capability:
        s["capability"] = capability
    if guarantee:
        s["guarantee"] = {"resource": guarantee}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
            "metadata": {"name": name, "uid": "uid-q-" + name}, "spec": s}


affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [
        {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["A100-SXM4-80GB"]},
        {"key": "zone", "operator": "NotIn", "values": ["b"]},
        {"key": "spot", "operator": "DoesNotExist"}]}]}}}
hand_objects = {
    "node_8gpu": node("n1", 8),
    "node_tainted_cordoned": node("n2", 4, unschedulable=True, taints=[
        {"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
    "node_cpu_only": node("cpu-1", 0, cpu="32", memory="128Gi", labels={}),
    "pod_pending_gpus": pod("p1", gpus=2),
    "pod_bound_devices": pod("p2", gpus=0, node_name="n1", phase="Running", annotations={
        "gantry.dev/gpu-fraction": "0.5", "gantry.dev/gpu-devices": "3"}),
    "pod_gpu_memory": pod("p3", annotations={"gantry.dev/gpu-memory": "10240",
                                             "gantry.dev/queue": "research"}),
    "pod_affinity_tolerations": pod("p4", gpus=1, affinity=affinity, tolerations=[
        {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        nodeSelector={"zone": "a"}, priority=1000),
    "pod_init_overhead": pod("p5", initContainers=[
        {"name": "i", "resources": {"requests": {"cpu": "8"}, "limits": {"memory": "1Gi"}}}],
        overhead={"cpu": "250m", "memory": "120Mi"}),
    "pod_grouped": pod("p6", gpus=8, annotations={"scheduling.k8s.io/group-name": "train"}),
    "pod_coscheduling": pod("p7", gpus=1, labels={"scheduling.x-k8s.io/pod-group": "g"}),
    "pod_other_scheduler_bound": pod("p8", gpus=8, scheduler="default-scheduler",
                                     node_name="n1", phase="Running"),
    "podgroup_volcano": volcano_group("train", 4, "team-a", priorityClassName="high",
                                      minResources={"cpu": "32", "nvidia.com/gpu": 32}),
    "podgroup_coscheduling": {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                              "metadata": {"name": "g", "namespace": "ml"},
                              "spec": {"minMember": 2, "scheduleTimeoutSeconds": 60}},
    "queue_limits": queue("team-a", 2, {"cpu": "100", "nvidia.com/gpu": 16},
                          {"nvidia.com/gpu": 4}),
    "priorityclass": {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                      "metadata": {"name": "high"}, "value": 100000},
    "resource_list": {"cpu": "500m", "memory": 1073741824, "nvidia.com/gpu": 2,
                      "example.com/foo": "3"},
}
for name, obj in hand_objects.items():
    objects.add("hand_" + name + ".json", json.dumps(obj))

# ---------------------------------------------------------------- DRA objects
# The unit tests' fixtures (NVIDIA GPU driver slices, a class, claims, a pod), read from
# tests/unit/dra_fixtures.h so that they are written once, and a few more shapes.
dra = Corpus("dra_objects", 16384)
with open(os.path.join(ROOT, "tests", "unit", "dra_fixtures.h")) as f:
    test_source = f.read()
for name, _, text in re.findall(r'const char\* const (k\w+) = R"(\w*)\((.*?)\)\2";', test_source,
                                re.S):
    dra.add("fixture_" + name + ".json", json.dumps(json.loads(text)))


def dra_slice(name, devices=None, **spec):
    s = {"driver": "gpu.nvidia.com", "pool": {"name": name, "generation": 1,
                                              "resourceSliceCount": 1}}
    if devices is not None:
        s["devices"] = devices
    s.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name}, "spec": s}


def claim_spec(*requests, **more):
    devices = {"requests": list(requests)}
    devices.update(more)
    return {"devices": devices}


shared_gpu = {"name": "gpu-0", "allowMultipleAllocations": True,
              "attributes": {"productName": {"string": "NVIDIA L4"}},
              "capacity": {"memory": {"value": "24Gi", "requestPolicy": {
                  "default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}},
                  "cores": {"value": "100", "requestPolicy": {
                      "default": "10", "validValues": ["10", "50", "100"]}}},
              "taints": [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute",
                          "timeAdded": "2026-01-02T03:04:05Z"}],
              "bindsToNode": True, "bindingConditions": ["example.com/attached"],
              "bindingFailureConditions": ["example.com/failed"]}
hand_dra = {
    "slice_consumable_capacity": dra_slice("node-3", [shared_gpu], nodeName="node-3"),
    "slice_per_device": dra_slice("fabric", [
        {"name": "nic-0", "nodeName": "node-1"},
        {"name": "nic-1", "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "rack", "operator": "In", "values": ["r1"]}]}]}},
        {"name": "nic-2", "allNodes": True}], perDeviceNodeSelection=True),
    "slice_node_selector": dra_slice("rack-1", [{"name": "d"}], nodeSelector={
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}),
    "taint_rule": {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                   "metadata": {"name": "drain"},
                   "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "node-1",
                                               "device": "gpu-0"},
                            "taint": {"key": "maintenance", "effect": "NoSchedule"}}},
    "claim_template": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                       "metadata": {"name": "one-gpu", "namespace": "ml"},
                       "spec": {"spec": claim_spec({"name": "gpu", "exactly": {
                           "deviceClassName": "gpu.nvidia.com", "capacity": {
                               "requests": {"memory": "8Gi"}}}})}},
    "claim_admin": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "monitor", "namespace": "ops"},
                    "spec": claim_spec({"name": "all", "exactly": {
                        "deviceClassName": "gpu.nvidia.com", "allocationMode": "All",
                        "adminAccess": True}})},
    "pod_claims": {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "train-0", "namespace": "ml"},
                   "spec": {"resourceClaims": [
                       {"name": "gpus", "resourceClaimTemplateName": "one-gpu"},
                       {"name": "shared", "resourceClaimName": "shared-gpu"}]},
                   "status": {"resourceClaimStatuses": [
                       {"name": "gpus", "resourceClaimName": "train-0-gpus-x7k2p"}]}},
}
for name, obj in hand_dra.items():
    dra.add("hand_" + name + ".json", json.dumps(obj))

# ---------------------------------------------------------------- cluster cache streams
cache = Corpus("cluster_cache", 16384)


def line(kind, event, obj):
    return "%s%s %s\n" % (kind, event, json.dumps(obj, separators=(",", ":")))


def owned(obj, kind, name):
    """The pod with a controller owner reference, as a ReplicaSet's controller makes it."""
    api_version = "v1" if kind == "ReplicationController" else "apps/v1"
    obj["metadata"]["ownerReferences"] = [{"apiVersion": api_version, "kind": kind, "name": name,
                                           "uid": "uid-" + name, "controller": True}]
    return obj


def spread_object(kind, name, selector):
    api_version = "v1" if kind in ("Service", "ReplicationController") else "apps/v1"
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": "ml", "uid": "uid-" + name},
            "spec": {"selector": selector}}


streams = {
    "default_spread": [line("N", "A", node("n1", 0, labels={"kubernetes.io/hostname": "n1"})),
                       line("N", "A", node("n2", 0, labels={"kubernetes.io/hostname": "n2"})),
                       line("E", "A", spread_object("Service", "web", {"app": "web"})),
                       line("X", "A", spread_object("ReplicaSet", "web-1", {
                           "matchLabels": {"app": "web"},
                           "matchExpressions": [{"key": "pod-template-hash", "operator": "In",
                                                 "values": ["1"]}]})),
                       line("P", "A", owned(pod("w0", labels={"app": "web",
                                                              "pod-template-hash": "1"}),
                                            "ReplicaSet", "web-1")),
                       line("P", "A", owned(pod("w1", labels={"app": "web"}),
                                            "StatefulSet", "db")),
                       line("T", "A", spread_object("StatefulSet", "db", {"matchLabels": 3})),
                       line("O", "A", spread_object("ReplicationController", "old",
                                                    {"app": "web"})),
                       "S\n", "B0\n",
                       line("E", "M", spread_object("Service", "web", {"app": 1})), "S\n",
                       line("E", "D", spread_object("Service", "web", {})),
                       line("T", "D", spread_object("StatefulSet", "db", {})), "S\n"],
    "nodes_pods_cycle": [line("N", "A", node("n1", 8)), line("N", "A", node("n2", 8)),
                         line("P", "A", pod("a", gpus=4)), line("P", "A", pod("b", gpus=8)),
                         "S\n", "B0\n", "F1\n", "S\n"],
    "gang_with_group": [line("N", "A", node("n1", 8)), line("Q", "A", queue("team-a", 2)),
                        line("V", "A", volcano_group("train", 2, "team-a")),
                        line("P", "A", pod("w0", gpus=4, annotations={
                            "scheduling.k8s.io/group-name": "train"})),
                        line("P", "A", pod("w1", gpus=4, annotations={
                            "scheduling.k8s.io/group-name": "train"})),
                        "S\n", "B0\n", "B1\n", "S\n",
                        line("V", "M", volcano_group("train", 3, "team-a")), "S\n"],
    "other_scheduler_fills_node": [line("N", "A", node("n1", 8)),
                                   line("P", "A", pod("theirs", gpus=8,
                                                      scheduler="default-scheduler",
                                                      node_name="n1", phase="Running")),
                                   line("P", "A", pod("mine", gpus=1)), "S\n"],
    "shared_gpus": [line("N", "A", node("n1", 2)),
                    line("P", "A", pod("half", annotations={"gantry.dev/gpu-fraction": "0.5"})),
                    line("P", "A", pod("mem", annotations={"gantry.dev/gpu-memory": "40960"})),
                    "S\n", "B0\n", "B1\n", "S\n"],
    "node_deleted_and_back": [line("N", "A", node("n1", 8)),
                              line("P", "A", pod("r", gpus=8, node_name="n1", phase="Running")),
                              line("N", "D", node("n1", 8)), "S\n",
                              line("N", "A", node("n1", 8)),
                              line("P", "A", pod("p", gpus=1)), "S\n",
                              line("P", "D", pod("r", gpus=8)), "S\n"],
    "priorities_and_queues": [line("R", "A", hand_objects["priorityclass"]),
                              line("Q", "A", queue("research", 1, {"nvidia.com/gpu": 1})),
                              line("N", "A", node("n1", 4)),
                              line("P", "A", pod("hi", gpus=2, priority=100000,
                                                 annotations={"gantry.dev/queue": "research"})),
                              line("P", "A", pod("lo", gpus=2)), "S\n", "B0\n", "S\n"],
    "native_gang": [line("N", "A", node("n1", 8, labels={"topology.kubernetes.io/zone": "z1"})),
                    line("I", "A", {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                    "metadata": {"name": "g", "namespace": "ml", "uid": "uid-g"},
                                    "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                                             "disruptionMode": {"all": {}},
                                             "schedulingConstraints": {"topology": [
                                                 {"key": "topology.kubernetes.io/zone"}]}}}),
                    line("P", "A", pod("n0", gpus=2, schedulingGroup={"podGroupName": "g"})),
                    line("P", "A", pod("n1", gpus=2, schedulingGroup={"podGroupName": "g"})),
                    line("P", "A", pod("other", gpus=1, scheduler="default-scheduler",
                                       schedulingGroup={"podGroupName": "g"})),
                    "S\n", line("P", "D", pod("other", gpus=1)), "S\n", "B0\n", "B1\n", "S\n"],
    "coscheduling": [line("N", "A", node("n1", 8)),
                     line("C", "A", hand_objects["podgroup_coscheduling"]),
                     line("P", "A", pod("c0", gpus=1, labels={"scheduling.x-k8s.io/pod-group": "g"})),
                     line("P", "A", pod("c1", gpus=1, labels={"scheduling.x-k8s.io/pod-group": "g"})),
                     "S\n", "B0\n", "B1\n", line("P", "M", pod("c0", gpus=1, node_name="n1",
                                                              phase="Succeeded")), "S\n"],
}
# MIG nodes (mixed and single strategy, one re-cut) and HyperNodes (a tree, a cycle).
streams["mig_and_hypernodes"] = [l + "\n" for l in """\
NA {"apiVersion":"v1","kind":"Node","metadata":{"name":"m1","uid":"uid-m1","resourceVersion":"1","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/mig.strategy":"mixed","nvidia.com/mig.config.state":"success"}},"spec":{},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/mig-1g.10gb":"7","nvidia.com/mig-3g.40gb":"2"}}}
NA {"apiVersion":"v1","kind":"Node","metadata":{"name":"s1","uid":"uid-s1","resourceVersion":"1","labels":{"rack":"r1","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB-MIG-3g.40gb","nvidia.com/mig.strategy":"single"}},"spec":{},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":"4"}}}
HA {"apiVersion":"topology.volcano.sh/v1alpha1","kind":"HyperNode","metadata":{"name":"leaf","uid":"uid-h1"},"spec":{"tier":1,"members":[{"type":"Node","selector":{"regexMatch":{"pattern":"^m"}}},{"type":"Node","selector":{"labelMatch":{"matchLabels":{"rack":"r1"}}}}]}}
HA {"apiVersion":"topology.volcano.sh/v1alpha1","kind":"HyperNode","metadata":{"name":"spine","uid":"uid-h2"},"spec":{"tier":2,"members":[{"type":"HyperNode","selector":{"exactMatch":{"name":"leaf"}}}]}}
PA {"apiVersion":"v1","kind":"Pod","metadata":{"name":"slice","namespace":"ml","uid":"uid-slice","resourceVersion":"1"},"spec":{"schedulerName":"gantry","containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/mig-1g.10gb":"2"}}}]},"status":{"phase":"Pending"}}
PA {"apiVersion":"v1","kind":"Pod","metadata":{"name":"one","namespace":"ml","uid":"uid-one","resourceVersion":"1"},"spec":{"schedulerName":"gantry","containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}}
S
B0
B1
NM {"apiVersion":"v1","kind":"Node","metadata":{"name":"m1","uid":"uid-m1","resourceVersion":"2","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/mig.strategy":"mixed","nvidia.com/mig.config.state":"pending"}},"spec":{},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/mig-7g.80gb":"1"}}}
HA {"apiVersion":"topology.volcano.sh/v1alpha1","kind":"HyperNode","metadata":{"name":"loop","uid":"uid-h3"},"spec":{"tier":3,"members":[{"type":"HyperNode","selector":{"exactMatch":{"name":"loop"}}}]}}
HD {"apiVersion":"topology.volcano.sh/v1alpha1","kind":"HyperNode","metadata":{"name":"leaf","uid":"uid-h1"}}
S
""".splitlines()]
# NUMA: a NodeResourceTopology before and after its node, Guaranteed pods one per NUMA node,
# one that fits none, then the object changed to one whose GPUs do not add up, and deleted.
streams["numa"] = [l + "\n" for l in """\
ZA {"apiVersion":"topology.node.k8s.io/v1alpha2","kind":"NodeResourceTopology","metadata":{"name":"n1","uid":"uid-z1"},"attributes":[{"name":"topologyManagerPolicy","value":"single-numa-node"},{"name":"topologyManagerScope","value":"pod"}],"zones":[{"name":"node-0","type":"Node","resources":[{"name":"cpu","capacity":"16","allocatable":"16","available":"16"},{"name":"nvidia.com/gpu","capacity":"2","allocatable":"2","available":"2"}]},{"name":"node-1","type":"Node","resources":[{"name":"cpu","capacity":"16","allocatable":"16","available":"16"},{"name":"nvidia.com/gpu","capacity":"2","allocatable":"2","available":"2"}]}]}
NA {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","uid":"uid-n1","resourceVersion":"1"},"spec":{},"status":{"allocatable":{"cpu":"32","memory":"128Gi","pods":"110","nvidia.com/gpu":"4"}}}
PA {"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"ml","uid":"uid-a","resourceVersion":"1"},"spec":{"schedulerName":"gantry","containers":[{"name":"c","resources":{"limits":{"cpu":"10","memory":"1Gi","nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}}
PA {"apiVersion":"v1","kind":"Pod","metadata":{"name":"b","namespace":"ml","uid":"uid-b","resourceVersion":"1"},"spec":{"schedulerName":"gantry","initContainers":[{"name":"i","resources":{"limits":{"cpu":"4","memory":"1Gi"}}}],"containers":[{"name":"c","resources":{"limits":{"cpu":"10","memory":"1Gi"}}},{"name":"d","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]},"status":{"phase":"Pending"}}
PA {"apiVersion":"v1","kind":"Pod","metadata":{"name":"wide","namespace":"ml","uid":"uid-w","resourceVersion":"1"},"spec":{"schedulerName":"gantry","containers":[{"name":"c","resources":{"limits":{"cpu":"20","memory":"1Gi"}}}]},"status":{"phase":"Pending"}}
S
B0
B1
ZM {"apiVersion":"topology.node.k8s.io/v1alpha2","kind":"NodeResourceTopology","metadata":{"name":"n1","uid":"uid-z1"},"topologyPolicies":["SingleNUMANodeContainerLevel"],"zones":[{"name":"node-0","type":"Node","resources":[{"name":"cpu","allocatable":"8"},{"name":"nvidia.com/gpu","allocatable":"3"}]},{"name":"node-1","type":"Node","resources":[{"name":"cpu","allocatable":"8"},{"name":"nvidia.com/gpu","allocatable":"3"}]}]}
S
ZM {"apiVersion":"topology.node.k8s.io/v1alpha2","kind":"NodeResourceTopology","metadata":{"name":"n1","uid":"uid-z1"},"topologyPolicies":["SingleNUMANodeContainerLevel"],"zones":[{"name":"node-0","type":"Node","resources":[{"name":"cpu","allocatable":"8"},{"name":"nvidia.com/gpu","allocatable":"2"}]},{"name":"node-1","type":"Node","resources":[{"name":"cpu","allocatable":"8"},{"name":"nvidia.com/gpu","allocatable":"2"}]}]}
S
ZD {"apiVersion":"topology.node.k8s.io/v1alpha2","kind":"NodeResourceTopology","metadata":{"name":"n1","uid":"uid-z1"}}
S
""".splitlines()]
for name, lines in streams.items():
    cache.add(name, "".join(lines))

# ---------------------------------------------------------------- daemon configuration
config = Corpus("daemon_config", 4096)
for path in files("deploy/gantry-config.yaml", "tests/validate/invalid/config_*.yaml"):
    config.add_file(path)
for path, i, doc in manifest_documents():
    if isinstance(doc, dict) and isinstance(doc.get("data"), dict) \
            and isinstance(doc["data"].get("config.yaml"), str):
        config.add("%s.%d.config.yaml" % (seed_name(path), i), doc["data"]["config.yaml"])
config.add("hand_integration_tests",
           "schedulerName: gantry-test\nschedulePeriod: 500ms\nbindWorkers: 8\n"
           "listenAddress: 127.0.0.1:0\nleaderElection: {enabled: true, namespace: default, "
           "name: lease, leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 300ms}\n"
           "engine:\n  actions: [enqueue, allocate, backfill]\n"
           "  plugins: [priority, gang, drf, proportion, predicates, {name: binpack, "
           "arguments: {weight: 2, nvidia.com/gpu: 4}}]\n  nodesToScore: 0\n"
           "  tieBreak: shuffled\n")

# ---------------------------------------------------------------- YAML to JSON
yaml_json = Corpus("yaml_json", 16384)
for path in files("deploy/**/*.yaml", "tests/validate/invalid/*.yaml"):
    yaml_json.add_file(path)
for path in files("tests/scenario/*.yaml")[:8]:
    yaml_json.add_file(path)
yaml_json.add("hand_aliases.yaml", aliases)
yaml_json.add("hand_scalars", "a: 0o17\nb: 0x1F\nc: 1e400\nd: -.5\ne: ~\nf: 'quoted 1'\n"
              "g: [true, False, NULL, 99999999999999999999]\n---\n- &x {k: v}\n- *x\n")

for harness in sorted(os.listdir(FUZZ)):
    d = os.path.join(FUZZ, harness, "corpus")
    if os.path.isdir(d):
        print("%-14s %3d seeds" % (harness, len(os.listdir(d))))
