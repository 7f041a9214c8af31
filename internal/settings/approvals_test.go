package settings

import (
	"reflect"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestParseApprovals: PROXMOX_SAFE_APPROVALS is read into per-class levels
// in order; malformed values are refused with a message naming the problem.
func TestParseApprovals(t *testing.T) {
	t.Parallel()
	c := &Config{}
	if err := parseApprovals(c, " power=elicit, phrase ; snapshot=elicit;"); err != nil {
		t.Fatal(err)
	}
	want := map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{
		proxmoxsafe.ClassPower:    {proxmoxsafe.LevelElicit, proxmoxsafe.LevelPhrase},
		proxmoxsafe.ClassSnapshot: {proxmoxsafe.LevelElicit},
	}
	if !reflect.DeepEqual(c.Approvals, want) {
		t.Errorf("got %v, want %v", c.Approvals, want)
	}
	for in, msg := range map[string]string{
		"power":                    "is not CLASS=LEVEL",
		"power=":                   "is not CLASS=LEVEL",
		"=elicit":                  "is not CLASS=LEVEL",
		"power=elicit;power=none":  "listed twice",
		"power=token":              `unknown approval level "token"`,
		"power=elicit,,phrase":     `unknown approval level ""`,
		"snapshot=ELICIT":          `unknown approval level "ELICIT"`,
		"power=elicit;snapshot=pw": `unknown approval level "pw"`,
	} {
		if err := parseApprovals(&Config{}, in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want one saying %q", in, err, msg)
		}
	}
}
