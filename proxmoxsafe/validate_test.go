package proxmoxsafe_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestMaxTagsMatchConstants: struct tags cannot name constants, so every
// max= in an input's validate tag is checked here against the exported
// constant that documents it. A new max= without an entry fails the test.
func TestMaxTagsMatchConstants(t *testing.T) {
	t.Parallel()
	want := map[string]int{
		"ListGuestsInput.Name":           proxmoxsafe.MaxNameFilterLen,
		"ListGuestsInput.Limit":          proxmoxsafe.MaxListLimit,
		"ListGuestsInput.Cursor":         proxmoxsafe.MaxCursorLen,
		"GuestPowerInput.Approval":       proxmoxsafe.MaxApprovalLen,
		"SnapshotGuestInput.Approval":    proxmoxsafe.MaxApprovalLen,
		"SnapshotGuestInput.Description": proxmoxsafe.MaxSnapshotDescriptionLen,
		"ListTasksInput.Type":            proxmoxsafe.MaxTaskTypeLen,
		"ListTasksInput.Limit":           proxmoxsafe.MaxTaskListLimit,
		"ListTasksInput.Start":           proxmoxsafe.MaxTaskListStart,
		"TaskLogInput.UPID":              proxmoxsafe.MaxUPIDLen,
		"TaskLogInput.Lines":             proxmoxsafe.MaxTaskLogLines,
		"TaskStateInput.UPID":            proxmoxsafe.MaxUPIDLen,
		"WaitTaskInput.UPID":             proxmoxsafe.MaxUPIDLen,
		"ListStorageInput.Limit":         proxmoxsafe.MaxListLimit,
		"ListBackupsInput.Limit":         proxmoxsafe.MaxListLimit,
		"MetricsHistoryInput.Points":     proxmoxsafe.MaxMetricsPoints,
		"NodeMetricsInput.Points":        proxmoxsafe.MaxMetricsPoints,
		"GuestMetricsInput.Points":       proxmoxsafe.MaxMetricsPoints,
		"StorageMetricsInput.Points":     proxmoxsafe.MaxMetricsPoints,
		"GuardedPowerInput.Approval":     proxmoxsafe.MaxApprovalLen,
		"ResetGuestInput.Approval":       proxmoxsafe.MaxApprovalLen,
		"CleanupSnapshotsInput.Approval": proxmoxsafe.MaxApprovalLen,
		"DeleteSnapshotInput.Approval":   proxmoxsafe.MaxApprovalLen,
		// Provision.
		"CloneGuestInput.Name":               proxmoxsafe.MaxDNSNameLen,
		"CloneGuestInput.Pool":               proxmoxsafe.MaxPoolIDLen,
		"CloneGuestInput.Description":        proxmoxsafe.MaxGuestDescriptionLen,
		"CloneGuestInput.Approval":           proxmoxsafe.MaxProvisionApprovalLen,
		"CreateVMInput.Name":                 proxmoxsafe.MaxDNSNameLen,
		"CreateVMInput.Cores":                proxmoxsafe.MaxCores,
		"CreateVMInput.Sockets":              proxmoxsafe.MaxSockets,
		"CreateVMInput.MemoryMiB":            proxmoxsafe.MaxMemoryMiB,
		"CreateVMInput.DiskSizeGiB":          proxmoxsafe.MaxDiskGiB,
		"CreateVMInput.ISO":                  proxmoxsafe.MaxVolumeIDLen,
		"CreateVMInput.Pool":                 proxmoxsafe.MaxPoolIDLen,
		"CreateVMInput.Description":          proxmoxsafe.MaxGuestDescriptionLen,
		"CreateVMInput.Approval":             proxmoxsafe.MaxProvisionApprovalLen,
		"CreateContainerInput.OSTemplate":    proxmoxsafe.MaxVolumeIDLen,
		"CreateContainerInput.Hostname":      proxmoxsafe.MaxDNSNameLen,
		"CreateContainerInput.Cores":         proxmoxsafe.MaxCores,
		"CreateContainerInput.MemoryMiB":     proxmoxsafe.MaxMemoryMiB,
		"CreateContainerInput.SwapMiB":       proxmoxsafe.MaxSwapMiB,
		"CreateContainerInput.RootfsSizeGiB": proxmoxsafe.MaxDiskGiB,
		"CreateContainerInput.SSHPublicKeys": proxmoxsafe.MaxSSHKeysLen,
		"CreateContainerInput.Pool":          proxmoxsafe.MaxPoolIDLen,
		"CreateContainerInput.Description":   proxmoxsafe.MaxGuestDescriptionLen,
		"CreateContainerInput.Approval":      proxmoxsafe.MaxProvisionApprovalLen,
		"MigrateGuestInput.Approval":         proxmoxsafe.MaxApprovalLen,
		"MigrateGuestInput.Timeout":          proxmoxsafe.MaxMigrateTimeout,
		"ResizeDiskInput.Disk":               proxmoxsafe.MaxDiskKeyLen,
		"ResizeDiskInput.Size":               proxmoxsafe.MaxResizeSizeLen,
		"ResizeDiskInput.Approval":           proxmoxsafe.MaxApprovalLen,
		"SetGuestConfigInput.Set":            proxmoxsafe.MaxConfigChanges,
		"SetGuestConfigInput.Delete":         proxmoxsafe.MaxConfigChanges,
		"SetGuestConfigInput.Approval":       proxmoxsafe.MaxConfigApprovalLen,
		// Guest insight.
		"GuestAddressesInput.Pool":   proxmoxsafe.MaxPoolIDLen,
		"GuestAddressesInput.Limit":  proxmoxsafe.MaxAddressesLimit,
		"GuestAddressesInput.Cursor": proxmoxsafe.MaxCursorLen,
	}
	inputs := []any{
		proxmoxsafe.NodeStatusInput{}, proxmoxsafe.ListGuestsInput{}, proxmoxsafe.GuestStatusInput{},
		proxmoxsafe.GuestConfigInput{}, proxmoxsafe.ListSnapshotsInput{}, proxmoxsafe.GuestPowerInput{},
		proxmoxsafe.SnapshotGuestInput{}, proxmoxsafe.ListTasksInput{}, proxmoxsafe.TaskLogInput{},
		proxmoxsafe.TaskStateInput{}, proxmoxsafe.WaitTaskInput{}, proxmoxsafe.ListStorageInput{},
		proxmoxsafe.ListBackupsInput{}, proxmoxsafe.WaitOptions{}, proxmoxsafe.GuardedPowerInput{},
		proxmoxsafe.ResetGuestInput{}, proxmoxsafe.CleanupSnapshotsInput{}, proxmoxsafe.DeleteSnapshotInput{},
		proxmoxsafe.CloneGuestInput{}, proxmoxsafe.CreateVMInput{}, proxmoxsafe.CreateContainerInput{},
		proxmoxsafe.MigrateGuestInput{},
		proxmoxsafe.ResizeDiskInput{}, proxmoxsafe.SetGuestConfigInput{},
		proxmoxsafe.GuestAddressesInput{}, proxmoxsafe.GuestAgentInfoInput{},
		proxmoxsafe.MetricsHistoryInput{}, proxmoxsafe.NodeMetricsInput{}, proxmoxsafe.GuestMetricsInput{}, proxmoxsafe.StorageMetricsInput{},
	}
	seen := map[string]bool{}
	for _, in := range inputs {
		typ := reflect.TypeOf(in)
		if _, ok := typ.FieldByName("Controls"); ok {
			// The shared Controls hold the approval: its limit is the
			// input's (MaxApprovalLenOf), checked by validateControls.
			key := typ.Name() + ".Approval"
			seen[key] = true
			if c, known := want[key]; !known || proxmoxsafe.MaxApprovalLenOf(in) != c {
				t.Errorf("%s: limit %d, its constant is %d", key, proxmoxsafe.MaxApprovalLenOf(in), c)
			}
		}
		for _, f := range reflect.VisibleFields(typ) {
			for rule := range strings.SplitSeq(f.Tag.Get("validate"), ",") {
				param, ok := strings.CutPrefix(rule, "max=")
				if !ok {
					continue
				}
				key := typ.Name() + "." + f.Name
				seen[key] = true
				n, err := strconv.Atoi(param)
				c, known := want[key]
				switch {
				case !known:
					t.Errorf("%s has max=%s but no constant in this test's table", key, param)
				case err != nil || n != c:
					t.Errorf("%s has max=%s, its constant is %d", key, param, c)
				}
			}
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("%s: no max= tag found (stale table entry)", key)
		}
	}
}
