// Command dra-oracle asks upstream's structured DRA allocator
// (k8s.io/dynamic-resource-allocation/structured v0.37.2, with the features and CEL cache
// kube-scheduler 1.37 uses by default) whether a pod's claims can be allocated on a node:
// the oracle of Gantry's differential test (issue 29).
//
//	dra-oracle generate --seed S --cases N [--out FILE]
//	    draws N random cases from seed S and writes one verdict line per (case, node);
//	    a summary (allocatable share, cases per feature, time) goes to stderr.
//	dra-oracle check FILE|-
//	    reads cases written by hand (the same JSON, verdict fields absent or ignored; a
//	    case without "node" is asked for every node in it) and writes their verdict lines.
//
// Output: one JSON object per line (see README.md in this folder):
//
//	{"seed":S,"case":C,"node":"node-0",
//	 "objects":{"nodes":[...],"deviceClasses":[...],"resourceSlices":[...],
//	            "allocatedClaims":[...],"claimsToAllocate":[...]},
//	 "allocatable":true,"results":[{"claim":"ns/name","allocation":{...}}],
//	 "errorKind":"node|fatal","error":"..."}
//
// The objects are the core/v1 and resource.k8s.io/v1 Go types marshalled with
// encoding/json, which is what the API server's JSON serializer writes.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "generate":
		err = runGenerate(os.Args[2:])
	case "check":
		err = runCheck(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dra-oracle:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: dra-oracle generate --seed S --cases N [--out FILE]\n       dra-oracle check FILE|-")
	os.Exit(2)
}

// generateStats summarises a run: verdicts, allocatable ones, and cases per feature.
type generateStats struct {
	cases, verdicts, allocatable, nodeErrors, fatalErrors int
	features                                              map[string]int
}

// generate writes the verdict lines of cases [0, numCases) of seed to w.
func generate(ctx context.Context, seed uint64, numCases int, w io.Writer) (*generateStats, error) {
	stats := &generateStats{features: map[string]int{}}
	for c := 0; c < numCases; c++ {
		objects := generateCase(seed, c)
		verdicts, err := evaluate(ctx, objects, "")
		if err != nil {
			return nil, fmt.Errorf("seed %d case %d: %w", seed, c, err)
		}
		stats.cases++
		for name := range caseFeatures(objects, verdicts) {
			stats.features[name]++
		}
		for i := range verdicts {
			v := &verdicts[i]
			v.Seed, v.Case = &seed, &c
			stats.verdicts++
			if v.Allocatable {
				stats.allocatable++
			}
			switch v.ErrorKind {
			case "node":
				stats.nodeErrors++
			case "fatal":
				stats.fatalErrors++
			}
			line, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("seed %d case %d node %s: %w", seed, c, v.Node, err)
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return nil, err
			}
		}
	}
	return stats, nil
}

func runGenerate(args []string) error {
	flags := flag.NewFlagSet("generate", flag.ContinueOnError)
	seed := flags.Uint64("seed", 1, "the seed: the same seed gives the same bytes")
	numCases := flags.Int("cases", 100, "how many cases")
	out := flags.String("out", "", "output file (default: stdout)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *numCases < 0 || flags.NArg() != 0 {
		return errors.New("generate: --cases must be >= 0 and no positional arguments are taken")
	}
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	buffered := bufio.NewWriterSize(w, 1<<20)
	start := time.Now()
	stats, err := generate(context.Background(), *seed, *numCases, buffered)
	if err != nil {
		return err
	}
	if err := buffered.Flush(); err != nil {
		return err
	}
	elapsed := time.Since(start)
	share := 0.0
	if stats.verdicts > 0 {
		share = 100 * float64(stats.allocatable) / float64(stats.verdicts)
	}
	fmt.Fprintf(os.Stderr, "seed %d: %d cases, %d (case, node) verdicts, %d allocatable (%.1f%%), "+
		"%d unschedulable-on-node errors, %d fatal errors, %.2fs\n",
		*seed, stats.cases, stats.verdicts, stats.allocatable, share, stats.nodeErrors, stats.fatalErrors,
		elapsed.Seconds())
	for _, name := range allFeatures {
		fmt.Fprintf(os.Stderr, "  %-26s %d cases\n", name, stats.features[name])
	}
	return nil
}

func runCheck(args []string) error {
	if len(args) != 1 {
		usage()
	}
	name := args[0]
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	return check(context.Background(), name, r, out)
}

// check answers every case in r (a stream of JSON objects in the output's format) on w.
func check(ctx context.Context, name string, r io.Reader, w io.Writer) error {
	decoder := json.NewDecoder(r)
	// A misspelt field in a hand-written case is an error, not a silently absent field.
	decoder.DisallowUnknownFields()
	for index := 0; ; index++ {
		offset := decoder.InputOffset()
		var in Verdict
		if err := decoder.Decode(&in); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: case #%d (at byte %d): %w", name, index, offset, err)
		}
		if in.Objects == nil {
			return fmt.Errorf("%s: case #%d (at byte %d): no \"objects\"", name, index, offset)
		}
		verdicts, err := evaluate(ctx, in.Objects, in.Node)
		if err != nil {
			return fmt.Errorf("%s: case #%d (at byte %d): %w", name, index, offset, err)
		}
		for i := range verdicts {
			verdicts[i].Seed, verdicts[i].Case = in.Seed, in.Case
			line, err := json.Marshal(&verdicts[i])
			if err != nil {
				return err
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return err
			}
		}
	}
}
