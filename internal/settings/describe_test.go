package settings

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	if DescribeNodes(nil) != "none" || DescribeNodes([]string{"a", "b"}) != "a, b" {
		t.Error("DescribeNodes")
	}
	if ClassNames(nil) != "none" || ClassNames([]proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot}) != "power, snapshot" {
		t.Error("ClassNames")
	}
	levels := []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelElicit, proxmoxsafe.LevelGrant}
	if LevelsText(proxmoxsafe.ClassPower, levels, ", ") != "elicit, grant" || LevelsText(proxmoxsafe.ClassGateway, levels, ",") != "none asked (reads)" {
		t.Error("LevelsText")
	}
}
