// Command pvefacts extracts, from the project's Proxmox VE reference data
// (shared/pve-api: the official API schema and recorded responses), the
// facts the fake's faithfulness tests check against, into
// proxmoxtest/testdata, so those tests run in every clone of the module.
//
// It is run by go generate in proxmoxsafe/proxmoxtest:
//
//	go generate ./proxmoxsafe/proxmoxtest
//
// What it writes, with attribution:
//
//   - pve-schema.json: for every endpoint of schema-subset.json (PVE 9.1),
//     its method and path, each parameter's type, optionality, enum, range
//     and maximum length, and the JSON type and property names its
//     "returns" declares;
//   - pve-schema-8.4.json, pve-schema-7.4.json: the same for the PVE 8.4
//     and 7.4 schema subsets (the older versions the fake answers as);
//   - pve-recorded.json: for every recording a test of the package names
//     ("pveN/....json" in a _test.go file), its skeleton: the same keys,
//     nesting and JSON types, with values blanked except the identifying
//     keys the tests pick entries by (id, vmid, type, name).
//
// When the reference data is not there (a clone without it), pvefacts
// says so and leaves the committed files alone.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

func main() {
	src := flag.String("src", filepath.Join("..", "..", "..", "shared", "pve-api"), "the pve-api reference directory")
	out := flag.String("out", "testdata", "the output directory")
	pkg := flag.String("pkg", ".", "the package whose _test.go files name the recordings")
	flag.Parse()
	if _, err := os.Stat(filepath.Join(*src, "schema-subset.json")); err != nil {
		fmt.Fprintf(os.Stderr, "pvefacts: no reference data at %s (%v); keeping the committed testdata\n", *src, err)
		return
	}
	if err := run(*src, *out, *pkg); err != nil {
		fmt.Fprintln(os.Stderr, "pvefacts:", err)
		os.Exit(1)
	}
}

const attribution = "Extracted by proxmoxsafe/proxmoxtest/internal/pvefacts (go generate) from the project's Proxmox VE reference data. " +
	"%s See shared/pve-api/SOURCE.md of the project for sources and commits. Facts for tests only; regenerate, do not edit."

func run(src, out, pkg string) error {
	schema, err := schemaFacts(filepath.Join(src, "schema-subset.json"))
	if err != nil {
		return err
	}
	if err := write(filepath.Join(out, "pve-schema.json"), map[string]any{
		"_about":    fmt.Sprintf(attribution, "Source: the official PVE 9.1 API schema (pve-docs api-viewer/apidata.js, commit a8736b6d; AGPL-3.0-or-later, Proxmox Server Solutions GmbH)."),
		"endpoints": schema,
	}); err != nil {
		return err
	}
	// The older releases the fake also answers as (Cluster.Version), so
	// the tests can check which parameters each version accepts.
	for _, v := range []struct{ release, commit string }{{"8.4", "ae1bf37e"}, {"7.4", "287a95cf"}} {
		schema, err := schemaFacts(filepath.Join(src, "schema-subset-pve"+v.release+".json"))
		if err != nil {
			return err
		}
		if err := write(filepath.Join(out, "pve-schema-"+v.release+".json"), map[string]any{
			"_about":    fmt.Sprintf(attribution, "Source: the official PVE "+v.release+" API schema (pve-docs api-viewer/apidata.js, commit "+v.commit+"; AGPL-3.0-or-later, Proxmox Server Solutions GmbH)."),
			"endpoints": schema,
		}); err != nil {
			return err
		}
	}
	names, err := recordingNames(pkg)
	if err != nil {
		return err
	}
	recs := map[string]any{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, "responses", n))
		if err != nil {
			return err
		}
		var env struct{ Data any }
		if err := json.Unmarshal(b, &env); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		recs[n] = skeleton("", env.Data)
	}
	return write(filepath.Join(out, "pve-recorded.json"), map[string]any{
		"_about":     fmt.Sprintf(attribution, "Source: recorded responses (fog-proxmox VCR cassettes, GPL-3.0, and the other recordings listed in responses/INDEX.json with their licenses), reduced to their shape."),
		"recordings": recs,
	})
}

// endpoint is what the tests need of one schema endpoint.
type endpoint struct {
	Method     string           `json:"method"`
	Path       string           `json:"path"`
	Parameters map[string]param `json:"parameters"`
	// Returns lists the property names "returns" declares (of the object,
	// or of the array's items); nil when it declares none.
	Returns []string `json:"returns"`
	// ReturnsType is the JSON type "returns" declares: "string" (a UPID
	// for workers), "null", "object", "array", "integer"; "" when none.
	ReturnsType string `json:"returnsType,omitempty"`
}

type param struct {
	Type     string `json:"type"`
	Optional bool   `json:"optional"`
	// Enum, Minimum, Maximum and MaxLength are the value constraints the
	// fake's validation models (omitted when the schema sets none).
	Enum      []string `json:"enum,omitempty"`
	Minimum   *float64 `json:"minimum,omitempty"`
	Maximum   *float64 `json:"maximum,omitempty"`
	MaxLength int      `json:"maxLength,omitempty"`
}

// number reads a schema bound, which apidata.js spells as a number or a
// string ("minimum": "0"); nil when absent.
func number(raw json.RawMessage) (*float64, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		n = json.Number(s)
	}
	f, err := n.Float64()
	if err != nil {
		return nil, err
	}
	return &f, nil
}

func schemaFacts(file string) ([]endpoint, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Endpoints []struct {
			Method     string
			Path       string
			Parameters struct {
				Properties map[string]struct {
					Type      string
					Optional  json.Number
					Enum      []string
					Minimum   json.RawMessage
					Maximum   json.RawMessage
					MaxLength json.RawMessage
				}
			}
			Returns struct {
				Type       string
				Properties map[string]json.RawMessage
				Items      struct{ Properties map[string]json.RawMessage }
			}
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var out []endpoint
	for _, e := range doc.Endpoints {
		ep := endpoint{Method: e.Method, Path: e.Path, Parameters: map[string]param{}, ReturnsType: e.Returns.Type}
		for name, p := range e.Parameters.Properties {
			sp := param{Type: p.Type, Optional: p.Optional == "1", Enum: p.Enum}
			if sp.Minimum, err = number(p.Minimum); err != nil {
				return nil, fmt.Errorf("%s %s %s minimum: %w", e.Method, e.Path, name, err)
			}
			if sp.Maximum, err = number(p.Maximum); err != nil {
				return nil, fmt.Errorf("%s %s %s maximum: %w", e.Method, e.Path, name, err)
			}
			ml, err := number(p.MaxLength)
			if err != nil {
				return nil, fmt.Errorf("%s %s %s maxLength: %w", e.Method, e.Path, name, err)
			}
			if ml != nil {
				sp.MaxLength = int(*ml)
			}
			ep.Parameters[name] = sp
		}
		declared := e.Returns.Properties
		if declared == nil {
			declared = e.Returns.Items.Properties
		}
		for k := range declared {
			ep.Returns = append(ep.Returns, k)
		}
		slices.Sort(ep.Returns)
		out = append(out, ep)
	}
	slices.SortFunc(out, func(a, b endpoint) int { return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method) })
	return out, nil
}

var recordingRe = regexp.MustCompile(`"(pve[0-9]+/[A-Za-z0-9._-]+\.json)"`)

// recordingNames finds the recordings the package's tests name.
func recordingNames(pkg string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(pkg, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range recordingRe.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// keptValues are the keys whose values the tests pick entries by.
var keptValues = map[string]bool{"id": true, "vmid": true, "type": true, "name": true}

// skeleton keeps keys, nesting and JSON types and blanks the values.
func skeleton(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = skeleton(k, x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = skeleton("", x)
		}
		return out
	case string:
		if keptValues[key] {
			return v
		}
		return ""
	case float64:
		if keptValues[key] {
			return v
		}
		return 0
	case bool:
		return false
	}
	return v
}

func write(file string, v any) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}
