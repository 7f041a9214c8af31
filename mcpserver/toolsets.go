package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// An operator may offer fewer tools than the policy allows: each tool
// costs every conversation its definition, and a model picks better from
// fewer. The selection only hides: a tool it keeps is still offered only
// when the policy enables its class, and a hidden tool is refused as an
// unknown tool, so nothing the policy refuses can be selected back in.

// Toolset names an area of tools, e.g. "snapshots".
type Toolset string

// The toolsets, in the order [Toolsets] lists them.
const (
	ToolsetCluster   Toolset = "cluster"
	ToolsetGuests    Toolset = "guests"
	ToolsetPower     Toolset = "power"
	ToolsetSnapshots Toolset = "snapshots"
	ToolsetProvision Toolset = "provision"
	ToolsetTasks     Toolset = "tasks"
	ToolsetBackups   Toolset = "backups"
	ToolsetGateway   Toolset = "gateway"
	ToolsetMetrics   Toolset = "metrics"
)

// ToolsetInfo is one toolset: its name, what it covers, and its tools in
// listing order.
type ToolsetInfo struct {
	Name  Toolset
	About string
	Tools []string
}

// toolsets is the one table of areas: every tool is in exactly one
// (TestEveryToolInOneToolset). A new tool is added to its area here (a
// backup_… tool is a backups tool without, byPrefix).
var toolsets = []toolsetEntry{
	{ToolsetCluster, "the cluster, its nodes, storage, HA, Ceph and the token's permissions",
		[]string{ToolClusterStatus, ToolNodeStatus, ToolStorageList, ToolCephStatus, ToolHAStatus, ToolNodeHealth, ToolHealthReport, ToolPermissionsCheck}},
	{ToolsetGuests, "guests: list, status, addresses, agent facts and configuration, config changes, disks, migration",
		[]string{ToolListGuests, ToolGuestStatus, ToolGuestAddresses, ToolGuestAgentInfo, ToolGuestConfig, ToolGuestConfigSet, ToolDiskResize, ToolGuestMigrate}},
	{ToolsetPower, "a guest's power: start, shutdown, reboot, stop, reset, suspend, resume",
		[]string{ToolGuestPower, ToolVMStart, ToolVMReboot, ToolVMReset, ToolGuestSuspend, ToolGuestResume}},
	{ToolsetSnapshots, "snapshots: list, take, roll back, delete, retention cleanup",
		[]string{ToolSnapshotList, ToolSnapshotGuest, ToolSnapshotRollback, ToolSnapshotDelete, ToolSnapshotCleanup}},
	{ToolsetProvision, "new and removed guests: clone, create a VM or a container, destroy",
		[]string{ToolGuestClone, ToolVMCreate, ToolContainerCreate, ToolGuestDestroy}},
	{ToolsetTasks, "Proxmox tasks: status with log, list",
		[]string{ToolTaskStatus, ToolTaskList}},
	{ToolsetBackups, "backups",
		[]string{ToolBackupList, ToolBackupCreate}},
	{ToolsetGateway, "the generic API gateway: any GET, and writes no tool covers",
		[]string{ToolAPIGet, ToolAPIRequest}},
	{ToolsetMetrics, "metrics history of nodes, guests and storage, as numbers or as a chart",
		[]string{ToolMetricsHistory, ToolMetricsChart}},
}

type toolsetEntry struct {
	name  Toolset
	about string
	tools []string
}

// Toolsets returns every toolset with its tools (every tool this version
// has, whatever a policy enables), in a fixed order.
func Toolsets() []ToolsetInfo {
	idx := toolsetIndex()
	out := make([]ToolsetInfo, len(idx.sets))
	for i, ts := range idx.sets {
		out[i] = ToolsetInfo{Name: ts.Name, About: ts.About, Tools: slices.Clone(ts.Tools)}
	}
	return out
}

// ToolsetOf returns the toolset of a tool, "" for an unknown tool.
func ToolsetOf(tool string) Toolset {
	return toolsetIndex().of[tool]
}

// toolsetIndex returns builtToolsets, built on first use (a function, not
// a package-level sync.OnceValue: the tools' handlers reach ToolsetOf,
// and the compiler would see an initialization cycle).
func toolsetIndex() *toolsetTable {
	builtToolsets.once.Do(func() { builtToolsets.table = buildToolsetTable() })
	return &builtToolsets.table
}

var builtToolsets struct {
	once  sync.Once
	table toolsetTable
}

// toolsetTable is the toolsets with their tools in listing order and each
// tool's toolset, built once: the settings'
// help text asks for it while the binary's packages are initialized, so
// every start pays for how it is built.
type toolsetTable struct {
	sets []ToolsetInfo
	of   map[string]Toolset
}

func buildToolsetTable() (idx toolsetTable) {
	tools := toolList()
	// One pass over the table and one over the tools, with a map from each
	// named tool to its area: matching every tool against every area's
	// list, then every area against every tool, took ~140,000 instructions
	// of each start (callgrind), about what building the tools themselves
	// costs. A tool the table names twice is in the first area naming it.
	named := make(map[string]int, len(tools))
	idx.sets = make([]ToolsetInfo, len(toolsets))
	for i, ts := range toolsets {
		idx.sets[i] = ToolsetInfo{Name: ts.name, About: ts.about, Tools: make([]string, 0, len(ts.tools))}
		for _, name := range ts.tools {
			if _, dup := named[name]; !dup {
				named[name] = i
			}
		}
	}
	idx.of = make(map[string]Toolset, len(tools))
	for _, d := range tools { // listing order
		name := d.info.Name
		i, ok := named[name]
		if !ok {
			set := byPrefix(name)
			i = slices.IndexFunc(toolsets, func(ts toolsetEntry) bool { return set != "" && ts.name == set })
		}
		if i < 0 {
			continue
		}
		idx.of[name] = idx.sets[i].Name
		idx.sets[i].Tools = append(idx.sets[i].Tools, name)
	}
	for i := range idx.sets {
		if len(idx.sets[i].Tools) == 0 {
			idx.sets[i].Tools = nil
		}
	}
	return idx
}

// byPrefix is the toolset of a tool the table does not name, by the area
// its name begins with (backup_restore is a backups tool); "" when none
// fits, which TestEveryToolInOneToolset reports.
func byPrefix(tool string) Toolset {
	if strings.HasPrefix(tool, "backup_") {
		return ToolsetBackups
	}
	return ""
}

// Selection chooses which of the tools the policy allows are offered,
// like github-mcp-server's --toolsets and --tools. The zero value selects
// every tool. A tool is selected when it is in one of Toolsets or named
// in Tools (with both empty: every tool), and it is not in one of
// ExcludeToolsets nor named in ExcludeTools: an exclusion wins.
type Selection struct {
	Toolsets        []Toolset
	Tools           []string
	ExcludeToolsets []Toolset
	ExcludeTools    []string
}

// IsZero reports whether s selects every tool.
func (s Selection) IsZero() bool {
	return len(s.Toolsets) == 0 && len(s.Tools) == 0 && len(s.ExcludeToolsets) == 0 && len(s.ExcludeTools) == 0
}

// Check returns an error naming each unknown toolset or tool, with the
// known ones, so a typo is not taken for "hide nothing".
func (s Selection) Check() error {
	var bad []string
	for _, set := range slices.Concat(s.Toolsets, s.ExcludeToolsets) {
		if !knownToolset(set) {
			bad = append(bad, "unknown toolset "+sanitize.Quote(set))
		}
	}
	for _, tool := range slices.Concat(s.Tools, s.ExcludeTools) {
		if ToolsetOf(tool) == "" {
			bad = append(bad, "unknown tool "+sanitize.Quote(tool))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	if len(bad) > 8 {
		bad = append(bad[:8], fmt.Sprintf("%d more", len(bad)-8))
	}
	var names []string
	for _, ts := range toolsets {
		names = append(names, string(ts.name))
	}
	return fmt.Errorf("tool selection: %s (toolsets: %s; tools: see the tools command)", strings.Join(bad, ", "), strings.Join(names, ", "))
}

func knownToolset(name Toolset) bool {
	for _, ts := range toolsets {
		if ts.name == name {
			return true
		}
	}
	return false
}

// Selects reports whether s offers the named tool (before the policy).
func (s Selection) Selects(tool string) bool {
	if s.IsZero() { // every tool, without looking its toolset up: each start asks for every tool twice
		return true
	}
	set := ToolsetOf(tool)
	if slices.Contains(s.ExcludeTools, tool) || slices.Contains(s.ExcludeToolsets, set) {
		return false
	}
	if len(s.Toolsets) == 0 && len(s.Tools) == 0 {
		return true
	}
	return slices.Contains(s.Toolsets, set) || slices.Contains(s.Tools, tool)
}

// String is the selection in the binary's flag syntax, "" for the zero
// value, e.g. "toolsets=cluster,guests exclude-tools=vm_reset".
func (s Selection) String() string {
	var parts []string
	add := func(name string, vals []string) {
		if len(vals) > 0 {
			parts = append(parts, name+"="+strings.Join(vals, ","))
		}
	}
	sets := func(v []Toolset) []string {
		out := make([]string, len(v))
		for i, t := range v {
			out[i] = string(t)
		}
		return out
	}
	add("toolsets", sets(s.Toolsets))
	add("tools", s.Tools)
	add("exclude-toolsets", sets(s.ExcludeToolsets))
	add("exclude-tools", s.ExcludeTools)
	return strings.Join(parts, " ")
}
