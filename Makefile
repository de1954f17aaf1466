# The two commands a newcomer needs: `make demo` and `make test`. Both install what they
# need first (scripts/setup.sh is idempotent and quick when everything is there).
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
RELEASE_BUILD ?= build-release
CMAKE_FLAGS ?=
# Seconds per fuzz harness: FUZZ_SECONDS for both (`make test FUZZ_SECONDS=60`), else 30 in
# `make test` and 600 in `make fuzz`.
FUZZ_SECONDS ?=
# The sanitizers' settings for every sanitizer run: stop at the first report, leaks count.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: all setup build build-asan build-fuzz build-release test test-asan fuzz demo fairness topology defragment bench bench-k8s format clean

all: build

setup:
	@scripts/setup.sh

# Every build here turns warnings into errors (GANTRY_WERROR): they are for Gantry's developers
# to fix; a user's or packager's build (GANTRY_WERROR off, the default) only shows them.
# GANTRY_DRA_CEL: src/dra/ links upstream's DRA CEL library, built with Go by
# scripts/dra/build-cel.sh (once, cached): asked for here, so that a missing Go stops the
# build instead of leaving its tests out.
$(BUILD)/build.ninja: CMakeLists.txt | setup
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGANTRY_WERROR=ON -DGANTRY_DRA_CEL=ON \
	  $(CMAKE_FLAGS)

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/build.ninja: CMakeLists.txt | setup
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGANTRY_SANITIZE=ON -DGANTRY_BENCH=OFF \
	  -DGANTRY_WERROR=ON -DGANTRY_DRA_CEL=ON

build-asan: setup $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target gantry_unit_tests gantry

# The libFuzzer harnesses (tests/fuzz/README.md): clang, its own build folder.
$(FUZZ_BUILD)/build.ninja: CMakeLists.txt tests/fuzz/CMakeLists.txt | setup
	CC=clang-16 CXX=clang++-16 cmake -S . -B $(FUZZ_BUILD) -G Ninja \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGANTRY_FUZZ=ON -DGANTRY_BENCH=OFF -DGANTRY_WERROR=ON

build-fuzz: setup $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

# The configuration users and packagers build (README: Release, -O3), compiled only, so that
# it is never broken unnoticed: gantry alone (its libraries are all of src/), warnings as
# errors; no tests, so neither GoogleTest nor Google Benchmark is looked for.
$(RELEASE_BUILD)/build.ninja: CMakeLists.txt | setup
	cmake -S . -B $(RELEASE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DGANTRY_WERROR=ON \
	  -DGANTRY_BUILD_TESTS=OFF

build-release: setup $(RELEASE_BUILD)/build.ninja
	cmake --build $(RELEASE_BUILD) -j $(JOBS) --target gantry

# The Release build compiled (build-release); then every test: unit, scenario, install
# (cmake --install into a temporary prefix, tests/install/), integration (a real
# kube-apiserver, see scripts/k8s/README.md; the first run builds its binaries), image (the Dockerfile's runtime stage built with buildah
# and `gantry --version` run in it, tests/image/); the integration tests again against the sanitizer
# build of `gantry serve` (a sanitizer report in its log fails the test); the unit tests and
# scenarios again under AddressSanitizer + UndefinedBehaviorSanitizer; then each fuzz
# harness for $(FUZZ_SECONDS) seconds (default 30) and its kept crashes once.
test: build build-release build-asan build-fuzz
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(BUILD) && GANTRY_BINARY=$(abspath $(ASAN_BUILD))/gantry $(SANITIZER_ENV) \
		ctest --output-on-failure -L integration
	cd $(ASAN_BUILD) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS) -L 'unit|scenario'
	cd $(FUZZ_BUILD) && FUZZ_SECONDS=$(or $(FUZZ_SECONDS),30) ctest --output-on-failure -j $(JOBS) -L fuzz

# Fuzzing for longer: each harness $(FUZZ_SECONDS) seconds (default 600), from the corpus
# earlier runs left in $(FUZZ_BUILD)/fuzz/; what it finds is reported as in `make test`.
fuzz: build-fuzz
	cd $(FUZZ_BUILD) && FUZZ_SECONDS=$(or $(FUZZ_SECONDS),600) ctest --output-on-failure -j $(JOBS) -L fuzz

# The simulator on the shipped Alibaba trace: the FGD paper's experiment with four
# policies over three seeds, written to out/demo/ (summary.json, timeseries.csv, report.html).
TRACE = data/alibaba-gpu-v2023
demo: build
	$(BUILD)/gantry sim --cluster $(TRACE)/openb_node_list_gpu_node.csv \
	  --workload $(TRACE)/openb_pod_list_default.csv --protocol fgd-atc23 \
	  --policy random,bestfit,fgd,gantry --seeds 42-44 --out out/demo
	@echo "open out/demo/report.html"

# Issue 12's fairness experiment: three queues at weights 1:2:1 on 128 GPUs, one-GPU gangs
# of 1-8 pods (some elastic) arriving at ~1.8x what the cluster serves, with reservations
# (after 600 s at the head of a queue), then reclaim (after a 300 s grace); prints per queue
# its share against its deserved share, Jain's index, evictions, loops found, and how late
# reserved jobs started.
fairness: build
	$(BUILD)/gantry sim --generate nodes=16,pods=30000,rate=0.1,duration=600,queues=q0:1/q1:2/q2:1,seed=42 \
	  --actions enqueue,reserve,reclaim,allocate,backfill --starvation 600 --preemption-grace 300 \
	  --policy gantry --seeds 42 --out out/fairness
	@echo "open out/fairness/report.html"

# Issue 13's topology experiment: gangs of four 8-GPU pods on 256 nodes in 4 spines of 4
# racks (tests/sim/topology-cluster.yaml), without a topology request, then with a required
# and a preferred rack; prints the racks and spines each gang spans.
topology: build
	for t in "" ",gangtopology=required:topology.gantry.dev/rack" ",gangtopology=preferred:topology.gantry.dev/rack"; do \
	  $(BUILD)/gantry sim --cluster tests/sim/topology-cluster.yaml \
	    --generate "pods=8000,rate=0.08,duration=3600,mix=40/20/35/5,seed=42$$t" --policy gantry --seeds 42 \
	    --out out/topology || exit 1; done

# Issue 13's defragmentation experiment: openb's pods with their creation and deletion times
# (departures), arrivals 1000x as dense (--time-scale 1000) on every 4th node of the openb
# GPU node list (303 nodes, 1,548 GPUs, the list's mix of models: the trace alone never
# contends on all 1,213 nodes), pods with a share of one GPU movable; without and with the
# defragment action (60 evictions an hour), three seeds. Prints, per run, the idle GPUs
# waiting whole-GPU jobs could not use, the evictions and the work they cost.
DEFRAG_OUT = out/defragment
defragment: build
	mkdir -p $(DEFRAG_OUT)
	awk -F, 'NR == 1 || NR % 4 == 2' $(TRACE)/openb_node_list_gpu_node.csv > $(DEFRAG_OUT)/nodes.csv
	for run in without:enqueue,allocate,backfill with:enqueue,allocate,backfill,defragment; do \
	  $(BUILD)/gantry sim --cluster $(DEFRAG_OUT)/nodes.csv --workload $(TRACE)/openb_pod_list_default.csv \
	    --time-scale 1000 --movable shared --defragment-budget 60 --actions $${run#*:} \
	    --policy gantry --seeds 42-44 --out $(DEFRAG_OUT)/$${run%%:*} || exit 1; done

bench: build
	$(BUILD)/engine_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
	$(BUILD)/sim_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
	$(BUILD)/spread_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
	$(BUILD)/eviction_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

# Throughput on a real API server: 5,000 nodes x 8 GPUs, 10,000 pending pods each for a
# plain bind loop (the ceiling), gantry and kube-scheduler; then gantry's peak memory
# with 50,000 pods. Then the same with 20% of the pods in required pod anti-affinity
# (groups of 20 one per node), with each scheduler's violations counted (must be 0).
# Then scheduler_perf's DRA shape (SchedulingWithResourceClaim): 500 nodes publishing their
# devices in ResourceSlices, 5,000 pods with a one-device ResourceClaim each, against the
# plain bind loop and a loop that also makes kube-scheduler's claim writes, with claims
# checked (each allocated on its pod's node and reserved for it, no device twice).
# Prints key=value lines. Builds the Kubernetes binaries on first use.
bench-k8s: build
	GANTRY_K8S_KWOK=0 scripts/k8s/build-binaries.sh >/dev/null
	$(BUILD)/k8s_throughput --nodes 5000 --pods 10000 --total-pods 50000
	$(BUILD)/k8s_throughput --nodes 5000 --pods 10000 --total-pods 0 --anti-affinity-percent 20
	$(BUILD)/k8s_throughput --nodes 500 --pods 5000 --total-pods 0 --claims true

format:
	clang-format -i $$(git ls-files 'src/*.h' 'src/*.cc' 'tests/*.cc' 'bench/*.cc')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(RELEASE_BUILD)
