package proxmoxsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// referenceData is how an answer was decoded before the scanners
// (decodeResources, decodeGuestStatus), and still is when they decline:
// encoding/json into the {"data": …} envelope, as internal/pve's Client
// does for any out value.
func referenceData[T any](body []byte) (T, error) {
	var raw T
	env := struct {
		Data any `json:"data"`
	}{Data: &raw}
	if err := json.Unmarshal(body, &env); err != nil {
		return raw, err
	}
	if env.Data == nil || !bytes.Contains(body, []byte(`"data"`)) {
		return raw, errors.New("no data")
	}
	return raw, nil
}

// sameAsEncodingJSON fails t when decode accepts body with another result
// than encoding/json's (referenceData), or accepts a body encoding/json
// refuses; wantFast also fails it when decode declines. Both scanners'
// differential tests go through it.
func sameAsEncodingJSON[T any](t *testing.T, name string, body []byte, wantFast bool, decode func([]byte) (T, bool)) {
	t.Helper()
	got, ok := decode(body)
	ref, err := referenceData[T](body)
	if !ok {
		if wantFast {
			t.Errorf("%s: declined (encoding/json: %v)", name, err)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: decoded a body encoding/json refuses (%v):\n%.300q", name, err, body)
		return
	}
	// %#v, not reflect.DeepEqual: a "NaN" cpu decodes to NaN on both sides.
	if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", ref); g != w {
		t.Errorf("%s: differs from encoding/json's:\n got %.600s\nwant %.600s\nbody %.300q", name, g, w, body)
	}
}

// sameAsReference is sameAsEncodingJSON for decodeResources.
func sameAsReference(t *testing.T, name string, body []byte, wantFast bool) {
	t.Helper()
	sameAsEncodingJSON(t, name, body, wantFast, decodeResources)
}

// fakeBodies renders /cluster/resources of simulated clusters, filtered
// by type=vm as ListGuests asks and unfiltered (nodes, storages, pools).
func fakeBodies(t testing.TB) map[string][]byte {
	t.Helper()
	odd := proxmoxtest.DemoCluster()
	odd.Guests[0].Name = "web\u200b1\u202e\x1b[31m\x07 <&> \"quoted\" back\\slash é 🚀"
	odd.Guests[1].Tags = []string{"a", "B", "ü"}
	odd.Guests[2].Lock = "backup"
	odd.Nodes[2].Online = false // its guests are listed without usage, status unknown
	clusters := map[string]*proxmoxtest.Cluster{
		"demo":      proxmoxtest.DemoCluster(),
		"odd names": odd,
		"generated": proxmoxtest.GenerateCluster(3, 40, 7),
		"1000":      proxmoxtest.GenerateCluster(10, 100, 1),
	}
	out := map[string][]byte{}
	for name, c := range clusters {
		fake := proxmoxtest.NewServer(c)
		for _, q := range []string{"?type=vm", ""} {
			out[name+q] = getBody(t, fake, "/cluster/resources"+q)
		}
		fake.Close()
	}
	return out
}

func recordedBodies(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{"pve7-cluster-resources.json", "pve7-lxc-list.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "recorded", f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

// TestDecodeResourcesMatchesEncodingJSON: on every answer Proxmox or the
// simulated cluster gives, decodeResources takes the fast path and gives
// encoding/json's rows, field for field.
func TestDecodeResourcesMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	bodies := fakeBodies(t)
	for name, b := range recordedBodies(t) {
		bodies[name] = b
	}
	for name, b := range bodies {
		sameAsReference(t, name, b, true)
		var compact, indented bytes.Buffer
		if json.Compact(&compact, b) == nil && json.Indent(&indented, b, "\t", "   ") == nil {
			sameAsReference(t, name+" compact", compact.Bytes(), true)
			sameAsReference(t, name+" indented", indented.Bytes(), true)
		}
	}
}

// resourceCases are answers in the forms Proxmox's loose typing takes
// across versions, and answers the fast path must decline or refuse
// exactly as encoding/json does; fast says whether the fast path must take
// them.
var resourceCases = []struct {
	name, body string
	fast       bool
}{
	{"empty list", `{"data":[]}`, true},
	{"pve6 strings", `{"data":[{"vmid":"100","template":"","cpu":"0.5","maxmem":"1024","type":"lxc","name":"ct","status":"stopped"}]}`, true},
	{"nulls", `{"data":[{"vmid":null,"name":null,"template":null,"cpu":null,"type":null,"node":null,"status":null,"hastate":null}]}`, true},
	{"numbers as text", `{"data":[{"vmid":1e3,"name":42,"lock":true,"tags":false,"maxmem":1.5e9,"uptime":-1,"mem":-0,"cpu":-1.25E-2}]}`, true},
	{"bool forms", `{"data":[{"template":true},{"template":"1"},{"template":"0"},{"template":1},{"template":0.0},{"template":false}]}`, true},
	{"escaped values", `{"data":[{"type":"q\u0065mu","name":"a\"b\\c\/d\n\u00e9\ud83d\ude80","node":"p\u0076e1","status":"run\tning","tags":"a;b,c d"}]}`, true},
	{"unicode and invalid UTF-8", "{\"data\":[{\"type\":\"qemu\",\"name\":\"\xff\xfe\u00e9\",\"node\":\"n\xc3\",\"status\":\"\xe2\x80\"}]}", true},
	{"type with invalid UTF-8", "{\"data\":[{\"type\":\"qe\xffmu\"}]}", true},
	{"duplicate keys, last wins", `{"data":[{"vmid":1,"vmid":2,"name":"a","name":"b","type":"qemu","type":null,"status":"x","status":null}]}`, true},
	{"unknown fields of every kind", `{"data":[{"id":"qemu/1","x":{"a":[1,{"b":null}],"c":"d"},"y":[[],{}],"z":true,"w":null,"v":-0.5e+7,"vmid":1}],"total":3,"other":{"data":1}}`, true},
	{"whitespace everywhere", " \t\r\n{ \"data\" : [ { \"vmid\" : 1 , \"type\" : \"lxc\" } , { } ] } \n", true},
	{"data after other keys", `{"errors":null,"data":[{"vmid":5}],"success":1}`, true},
	{"non-guest entries", `{"data":[{"id":"node/pve1","type":"node","node":"pve1","status":"online","level":""},{"id":"/pool/p","type":"pool","pool":"p"},{"id":"storage/pve1/local","type":"storage","storage":"local","shared":0}]}`, true},
	{"huge integers", `{"data":[{"vmid":9223372036854775807,"maxmem":1e300,"mem":"18446744073709551615"}]}`, true},

	// Declined: encoding/json decides.
	{"key in another case", `{"data":[{"VMID":7,"Name":"upper"}]}`, false},
	{"data in another case", `{"Data":[{"vmid":7}]}`, false},
	{"escaped key", `{"data":[{"v\u006did":7}]}`, false},
	{"escaped data key", `{"d\u0061ta":[{"vmid":7}]}`, false},
	{"non-ASCII key", `{"data":[{"ſtatus":"x","vmid":7}]}`, false},
	{"null element", `{"data":[null,{"vmid":7}]}`, false},
	{"data twice", `{"data":[{"vmid":1}],"data":[{"name":"x"}]}`, false},
	{"data null", `{"data":null}`, false},
	{"no data", `{"total":1}`, false},
	{"data not a list", `{"data":{"vmid":1}}`, false},
	{"element not an object", `{"data":[1]}`, false},
	{"type not a string", `{"data":[{"type":5}]}`, false},
	{"vmid not a number", `{"data":[{"vmid":"abc"}]}`, false},
	{"vmid an object", `{"data":[{"vmid":{}}]}`, false},
	{"template a word", `{"data":[{"template":"yes"}]}`, false},
	{"name a list", `{"data":[{"name":["a"]}]}`, false},
	{"trailing garbage", `{"data":[]} x`, false},
	{"two values", `{"data":[]}{}`, false},
	{"top level list", `[{"vmid":1}]`, false},
	{"leading zero", `{"data":[{"vmid":01}]}`, false},
	{"bare dot", `{"data":[{"cpu":.5}]}`, false},
	{"plus sign", `{"data":[{"cpu":+1}]}`, false},
	{"control character in string", "{\"data\":[{\"name\":\"a\x01b\"}]}", false},
	{"bad escape", `{"data":[{"name":"a\qb"}]}`, false},
	{"short unicode escape", `{"data":[{"name":"\u12"}]}`, false},
	{"trailing comma", `{"data":[{"vmid":1},]}`, false},
	{"missing colon", `{"data" [{"vmid":1}]}`, false},
	{"unterminated", `{"data":[{"vmid":1}`, false},
	{"deep nesting", `{"data":[{"x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}]}`, false},
	{"single quotes", `{'data':[]}`, false},
	{"NUL byte", "{\"data\":[]}\x00", false},
	{"empty", ``, false},
}

func TestDecodeResourcesCases(t *testing.T) {
	t.Parallel()
	for _, tc := range resourceCases {
		sameAsReference(t, tc.name, []byte(tc.body), tc.fast)
		if !tc.fast {
			if _, ok := decodeResources([]byte(tc.body)); ok {
				t.Errorf("%s: taken by the fast path, want it declined", tc.name)
			}
		}
	}
}

// mutationSeed is a small answer holding every field and value form, for
// TestDecodeResourcesMutations.
const mutationSeed = `{"data":[{"id":"qemu/100","vmid":100,"name":"web-01","node":"pve1","type":"qemu","status":"running",` +
	`"template":0,"lock":"backup","tags":"prod;web","hastate":"started","cpu":0.05,"maxcpu":4,"mem":2147483648,` +
	`"maxmem":8589934592,"disk":0,"maxdisk":68719476736,"uptime":259417,"pool":"db","netin":1,"x":{"a":[true,null]}},` +
	`{"vmid":"200","type":"lxc","name":"a\u00e9\"b","template":"","cpu":"1e-2"}],"total":2}`

// TestDecodeResourcesMutations damages a small answer one byte at a time
// (cut short, a byte dropped, a byte replaced by a JSON metacharacter or a
// control byte) and checks every result against encoding/json: whatever
// the fast path accepts, encoding/json accepts with the same rows.
func TestDecodeResourcesMutations(t *testing.T) {
	t.Parallel()
	seed := []byte(mutationSeed)
	sameAsReference(t, "seed", seed, true)
	for i := range seed {
		sameAsReference(t, fmt.Sprintf("cut at %d", i), seed[:i], false)
		dropped := append(append([]byte{}, seed[:i]...), seed[i+1:]...)
		sameAsReference(t, fmt.Sprintf("byte %d dropped", i), dropped, false)
		for _, c := range []byte(`"\{}[],:0-.e ` + "\x01\xff") {
			changed := append([]byte{}, seed...)
			changed[i] = c
			sameAsReference(t, fmt.Sprintf("byte %d set to %q", i, c), changed, false)
		}
	}
}

func FuzzDecodeResources(f *testing.F) {
	for _, tc := range resourceCases {
		f.Add([]byte(tc.body))
	}
	f.Add([]byte(mutationSeed))
	for _, b := range recordedBodies(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAsReference(t, "fuzz input", body, false)
	})
}

// BenchmarkDecodeResources decodes the 10,000-guest answer of the
// simulated cluster (3 MB) without HTTP: decodeResources against
// encoding/json into the same rows.
func BenchmarkDecodeResources(b *testing.B) {
	fake := proxmoxtest.NewServer(proxmoxtest.GenerateCluster(10, 1000, 1))
	body := getBody(b, fake, "/cluster/resources?type=vm")
	fake.Close()
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if rows, ok := decodeResources(body); !ok || len(rows) != 10000 {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if rows, err := referenceData[[]rawResource](body); err != nil || len(rows) != 10000 {
				b.Fatal(err)
			}
		}
	})
}

// TestResourceFieldsAreRawResource ties the fast path's key list to
// rawResource's json tags: a field added to the struct but not to the list
// would be skipped by the fast path when its key came in another case,
// where encoding/json sets it.
func TestResourceFieldsAreRawResource(t *testing.T) {
	t.Parallel()
	var tags []string
	rt := reflect.TypeFor[rawResource]()
	for i := range rt.NumField() {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		tags = append(tags, tag)
	}
	if !slices.Equal(tags, resourceFields) {
		t.Errorf("resourceFields = %q, rawResource's json tags = %q", resourceFields, tags)
	}
}
