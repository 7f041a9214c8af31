package proxmoxsafe

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// sameGuestStatus is sameAsEncodingJSON for decodeGuestStatus.
func sameGuestStatus(t *testing.T, name string, body []byte, wantFast bool) {
	t.Helper()
	sameAsEncodingJSON(t, name, body, wantFast, func(b []byte) (rawGuestStatusFull, bool) {
		var r rawGuestStatusFull
		ok := decodeGuestStatus(b, &r)
		return r, ok
	})
}

// TestDecodeGuestStatusMatchesEncodingJSON: on every guest's answer of the
// simulated clusters (VMs and containers, running, stopped, paused, locked,
// HA-managed, odd names and tags), decodeGuestStatus takes the fast path
// and gives encoding/json's result, field for field.
func TestDecodeGuestStatusMatchesEncodingJSON(t *testing.T) {
	odd := proxmoxtest.DemoCluster()
	odd.Guests[0].Name = "web\u200b1\u202e\x1b[31m\x07 <&> \"quoted\" back\\slash é 🚀"
	odd.Guests[1].Tags = []string{"a", "B", "ü"}
	odd.Guests[2].Lock = "backup"
	odd.Guests[3].HAManaged = true
	for name, c := range map[string]*proxmoxtest.Cluster{"demo": proxmoxtest.DemoCluster(), "odd": odd, "generated": proxmoxtest.GenerateCluster(2, 20, 3)} {
		fake := proxmoxtest.NewServer(c)
		for _, g := range c.Guests {
			path := "/nodes/" + g.Node + "/" + string(g.Type) + "/" + strconv.Itoa(g.VMID) + "/status/current"
			sameGuestStatus(t, name+" "+path, getBody(t, fake, path), true)
		}
		fake.Close()
	}
}

// getBody is the fake's answer to GET path as it comes over the wire.
func getBody(t testing.TB, fake *proxmoxtest.Server, path string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fake.URL+"/api2/json"+path, nil)
	req.Header.Set("Authorization", "PVEAPIToken="+proxmoxtest.DefaultTokenID+"="+proxmoxtest.DefaultTokenSecret)
	resp, err := fake.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %s", path, err, resp.Status)
	}
	return b
}

// guestStatusCases are answers on the edges: each must be decoded as
// encoding/json does or declined; fast says it must take the fast path.
var guestStatusCases = []struct {
	name, body string
	fast       bool
}{
	{"minimal", `{"data":{}}`, true},
	{"fields", `{"data":{"status":"running","qmpstatus":"paused","name":"a","lock":"backup","template":1,"uptime":"12","cpu":0.5,"cpus":"4","mem":1,"maxmem":2,"disk":3,"maxdisk":4,"netin":5,"netout":6,"diskread":7,"diskwrite":8,"agent":"1","tags":"x;y","running-qemu":"9.0","running-machine":"pc"}}`, true},
	{"ha", `{"data":{"ha":{"managed":1,"state":"started","group":"g"}}}`, true},
	{"ha null", `{"data":{"ha":null}}`, true},
	{"ha twice", `{"data":{"ha":{"managed":1,"state":"started"},"ha":{"state":"stopped"}}}`, true},
	{"ha not object", `{"data":{"ha":"yes"}}`, false},
	{"ha array", `{"data":{"ha":[]}}`, false},
	{"ha key case", `{"data":{"ha":{"Managed":1}}}`, false},
	{"repeated field", `{"data":{"name":"a","name":"b"}}`, true},
	{"null fields", `{"data":{"name":null,"cpu":null,"uptime":null,"template":null}}`, true},
	{"unknown fields", `{"data":{"nics":{"tap":{"netin":1}},"blockstat":{"a":[1,2,{"b":null}]},"x":true}}`, true},
	{"other top-level keys", `{"success":1,"data":{"name":"a"},"message":"m"}`, true},
	{"whitespace", " \n{ \"data\" : { \"name\" : \"a\" , \"ha\" : { } } }\t", true},
	{"escaped value", `{"data":{"name":"a\u00e9\n\"b"}}`, true},
	{"data null", `{"data":null}`, false},
	{"data missing", `{"success":1}`, false},
	{"data twice", `{"data":{},"data":{}}`, false},
	{"data array", `{"data":[]}`, false},
	{"data key case", `{"Data":{}}`, false},
	{"field key case", `{"data":{"Name":"a"}}`, false},
	{"escaped key", `{"data":{"n\u0061me":"a"}}`, false},
	{"non-ASCII key", `{"data":{"nämé":"a"}}`, false},
	{"wrong type", `{"data":{"cpus":[1]}}`, false},
	{"trailing garbage", `{"data":{}} x`, false},
	{"truncated", `{"data":{"name":"a"`, false},
	{"invalid number", `{"data":{"cpu":01}}`, false},
	{"not an object", `[{"data":{}}]`, false},
	{"empty", ``, false},
}

func TestDecodeGuestStatusCases(t *testing.T) {
	for _, tc := range guestStatusCases {
		sameGuestStatus(t, tc.name, []byte(tc.body), tc.fast)
	}
}

// TestDecodeGuestStatusFieldsAreTheStruct ties the list of keys the fast
// path refuses in another case to rawGuestStatusFull's json tags.
func TestDecodeGuestStatusFieldsAreTheStruct(t *testing.T) {
	var raw rawGuestStatusFull
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(guestStatusFields) {
		t.Errorf("rawGuestStatusFull has %d keys, guestStatusFields %d", len(keys), len(guestStatusFields))
	}
	for _, f := range guestStatusFields {
		if _, ok := keys[f]; !ok {
			t.Errorf("guestStatusFields lists %q, which rawGuestStatusFull does not have", f)
		}
	}
}

func FuzzDecodeGuestStatus(f *testing.F) {
	for _, tc := range guestStatusCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameGuestStatus(t, "fuzz input", body, false)
	})
}

// BenchmarkDecodeGuestStatus decodes a running VM's status/current answer
// (about 1.4 KB) without HTTP: decodeGuestStatus against encoding/json.
func BenchmarkDecodeGuestStatus(b *testing.B) {
	fake := proxmoxtest.NewServer(proxmoxtest.DemoCluster())
	body := getBody(b, fake, "/nodes/pve1/qemu/100/status/current")
	fake.Close()
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r rawGuestStatusFull
			if !decodeGuestStatus(body, &r) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := referenceData[rawGuestStatusFull](body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
