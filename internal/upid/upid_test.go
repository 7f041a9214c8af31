package upid

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// realUPIDs were returned by real Proxmox VE 6 and 7 servers (recordings in
// shared/pve-api/responses: qemu-status-start.json, tasks-status-*.json,
// nodes-node-tasks.json, qemu-snapshot-*.json).
var realUPIDs = []string{
	"UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:",
	"UPID:pve:00000754:00009421:5FBE5DD2:vzcreate:100:root@pam:",
	"UPID:pve:000007D3:00009880:5FBE5DDE:qmclone:100:root@pam:",
	"UPID:pve:0000094D:0000A111:5FBE5DF3:qmpause:100:root@pam:",
	"UPID:pve:00000A9F:0000CAD5:5FBE5E5E:imgdel:100@local:root@pam:",
	"UPID:proxmox-noris:0000FEAB:001E61AE:645CDCDA:vzrestore:101:root@pam:",
	"UPID:proxmox-noris:00010237:001E814B:645CDD2B:imgdel:111@local-lvm:root@pam:",
	"UPID:proxmox-noris:00010242:001E8319:645CDD2F:qmsnapshot:101:root@pam:",
	"UPID:proxmox-noris:00010243:001E8352:645CDD30:qmdelsnapshot:101:root@pam:",
	"UPID:proxmox-noris:00010253:001E8472:645CDD33:vzdump:101:root@pam:",
	"UPID:proxmox-noris:00010467:001E9A1D:645CDD6A:qmstop:101:root@pam:",
	"UPID:proxmox-noris:00010177:001E7E18:645CDD22:spiceproxy:101:root@pam:",
}

func TestParseReal(t *testing.T) {
	t.Parallel()
	for _, s := range realUPIDs {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			u, err := Parse(s)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := u.String(); got != s {
				t.Errorf("String() = %q, want %q", got, s)
			}
			if !Valid(s) {
				t.Error("Valid = false")
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     UPID
		canon    string
	}{
		{
			name: "FACTS example",
			in:   "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:",
			want: UPID{Node: "pve", PID: 0xB6E, PStart: 0xD071, StartTime: time.Unix(0x5FBE5E6D, 0).UTC(), Type: "qmstart", ID: "100", User: "root@pam"},
		},
		{
			name:  "lower-case hex",
			in:    "UPID:pve:00000b6e:0000d071:5fbe5e6d:qmstart:100:root@pam:",
			want:  UPID{Node: "pve", PID: 0xB6E, PStart: 0xD071, StartTime: time.Unix(0x5FBE5E6D, 0).UTC(), Type: "qmstart", ID: "100", User: "root@pam"},
			canon: "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:",
		},
		{
			name: "9-digit pstart after long uptime",
			in:   "UPID:pve1:0012D687:1A2B3C4D5:66A0B1C2:qmshutdown:101:root@pam:",
			want: UPID{Node: "pve1", PID: 0x12D687, PStart: 0x1A2B3C4D5, StartTime: time.Unix(0x66A0B1C2, 0).UTC(), Type: "qmshutdown", ID: "101", User: "root@pam"},
		},
		{
			name: "empty id",
			in:   "UPID:pve:00001234:00005678:5FBE5E6D:startall::root@pam:",
			want: UPID{Node: "pve", PID: 0x1234, PStart: 0x5678, StartTime: time.Unix(0x5FBE5E6D, 0).UTC(), Type: "startall", ID: "", User: "root@pam"},
		},
		{
			name: "token user",
			in:   "UPID:pve-02:00001234:00005678:5FBE5E6D:hastart:100:mcp@pve!safe:",
			want: UPID{Node: "pve-02", PID: 0x1234, PStart: 0x5678, StartTime: time.Unix(0x5FBE5E6D, 0).UTC(), Type: "hastart", ID: "100", User: "mcp@pve!safe"},
		},
		{
			name: "single-character node",
			in:   "UPID:a:00000001:00000002:00000003:qmstart:100:root@pam:",
			want: UPID{Node: "a", PID: 1, PStart: 2, StartTime: time.Unix(3, 0).UTC(), Type: "qmstart", ID: "100", User: "root@pam"},
		},
		{
			name: "max values",
			in:   "UPID:n:FFFFFFFF:FFFFFFFFF:FFFFFFFF:t:i:u:",
			want: UPID{Node: "n", PID: 0xFFFFFFFF, PStart: 0xFFFFFFFFF, StartTime: time.Unix(0xFFFFFFFF, 0).UTC(), Type: "t", ID: "i", User: "u"},
		},
		{
			name:  "9-digit pstart with leading zero is shortened",
			in:    "UPID:n:00000001:000000002:00000003:t:i:u:",
			want:  UPID{Node: "n", PID: 1, PStart: 2, StartTime: time.Unix(3, 0).UTC(), Type: "t", ID: "i", User: "u"},
			canon: "UPID:n:00000001:00000002:00000003:t:i:u:",
		},
		{
			// Proxmox's grammar allows this. Without a slash the UPID stays
			// one path segment, which the client escapes, so ".." cannot
			// climb out of /tasks/.
			name: "dots in type",
			in:   "UPID:pve:00000001:00000002:00000003:..:..:root@pam:",
			want: UPID{Node: "pve", PID: 1, PStart: 2, StartTime: time.Unix(3, 0).UTC(), Type: "..", ID: "..", User: "root@pam"},
		},
		{
			name: "non-ascii user name",
			in:   "UPID:pve:00000001:00000002:00000003:qmstart:100:jürgen@pve:",
			want: UPID{Node: "pve", PID: 1, PStart: 2, StartTime: time.Unix(3, 0).UTC(), Type: "qmstart", ID: "100", User: "jürgen@pve"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			canon := tc.canon
			if canon == "" {
				canon = tc.in
			}
			if s := got.String(); s != canon {
				t.Errorf("String() = %q, want %q", s, canon)
			}
			if got.StartTime.Location() != time.UTC {
				t.Errorf("StartTime location = %v, want UTC", got.StartTime.Location())
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	const ok = "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"
	cases := []struct{ name, in string }{
		{"empty", ""},
		{"missing trailing colon", strings.TrimSuffix(ok, ":")},
		{"trailing newline", ok + "\n"},
		{"trailing data", ok + "x"},
		{"leading space", " " + ok},
		{"lower-case prefix", "upid" + ok[4:]},
		{"no prefix", ok[5:]},
		{"status suffix from a URL", ok + "/status"},
		{"slash in id", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:1/0:root@pam:"},
		{"slash in user", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root/pam:"},
		{"path traversal", "UPID:../../../etc/passwd:"},
		{"path traversal in node", "UPID:..:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"space in type", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qm start:100:root@pam:"},
		{"tab in id", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:1\t0:root@pam:"},
		{"vertical tab in user", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root\v@pam:"},
		{"nbsp in user", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root\u00a0@pam:"},
		{"NUL in user", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root\x00@pam:"},
		{"ESC in type", "UPID:pve:00000B6E:0000D071:5FBE5E6D:\x1b[31m:100:root@pam:"},
		{"zero-width in id", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:10\u200b0:root@pam:"},
		{"bidi in user", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:\u202eroot@pam:"},
		{"invalid utf-8", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root\xff@pam:"},
		{"bad hex pid", "UPID:pve:00000G6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"short pid", "UPID:pve:B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"long pid", "UPID:pve:000000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"short pstart", "UPID:pve:00000B6E:000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"10-digit pstart", "UPID:pve:00000B6E:00000D0710:5FBE5E6D:qmstart:100:root@pam:"},
		{"long starttime", "UPID:pve:00000B6E:0000D071:05FBE5E6D:qmstart:100:root@pam:"},
		{"signed hex", "UPID:pve:-0000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"0x prefix", "UPID:pve:0x000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"node ends with dash", "UPID:pve-:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"node starts with dash", "UPID:-pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"node with dot", "UPID:pve.lan:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"empty node", "UPID::00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:"},
		{"empty type", "UPID:pve:00000B6E:0000D071:5FBE5E6D::100:root@pam:"},
		{"empty user", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100::"},
		{"extra field", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:root@pam:extra:"},
		{"too long", "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:" + strings.Repeat("u", MaxLen) + ":"},
		{"percent-encoded", "UPID%3Apve%3A00000B6E%3A0000D071%3A5FBE5E6D%3Aqmstart%3A100%3Aroot%40pam%3A"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want error", tc.in, u)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), "invalid UPID") {
				t.Errorf("error %q does not start with %q", err, "invalid UPID")
			}
			if u != (UPID{}) {
				t.Errorf("Parse returned non-zero UPID %+v with error", u)
			}
			if Valid(tc.in) {
				t.Error("Valid = true")
			}
		})
	}
}

func TestLongestAccepted(t *testing.T) {
	t.Parallel()
	prefix := "UPID:pve:00000B6E:0000D071:5FBE5E6D:qmstart:100:"
	user := strings.Repeat("u", MaxLen-len(prefix)-1)
	if s := prefix + user + ":"; len(s) != MaxLen || !Valid(s) {
		t.Errorf("%d-byte UPID rejected", len(s))
	}
	if s := prefix + user + "u:"; Valid(s) {
		t.Errorf("%d-byte UPID accepted", len(s))
	}
}

func TestErrorEchoIsBounded(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("A", 100) + "SHOULD-NOT-APPEAR"
	_, err := Parse(secret)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "SHOULD-NOT-APPEAR") {
		t.Errorf("error echoes more than 100 bytes: %q", err)
	}
	if !strings.Contains(err.Error(), strings.Repeat("A", 100)) {
		t.Errorf("error does not quote the start of the input: %q", err)
	}
	// Hostile bytes are quoted, never passed through raw.
	_, err = Parse("UPID:\x1b]0;title\a\u202e")
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b\a\u202e") {
		t.Errorf("error passes control characters through: %q", msg)
	}
}
