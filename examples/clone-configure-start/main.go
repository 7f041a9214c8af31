// Command clone-configure-start turns a template into a running VM with
// the proxmoxsafe library (no MCP): it clones the template, sets the
// clone's cores and memory, grows its disk and starts it.
//
// Each step goes the same way: the program first asks the library for a
// plan (Plan: true), which runs every check (policy, fresh state,
// preconditions) and sends nothing that changes the cluster; it prints
// what would be sent, the effect and the exact approval the step needs;
// the person running the program approves it at the terminal (or with
// -yes, in advance); then the same input goes again with the approval
// phrase from the plan, and the program waits until the library has
// verified the result from fresh state (the clone exists, the config reads
// back, the disk is larger, the VM runs).
//
// The steps use the classes provision, config and power and nothing else:
// even a bug here could not delete or roll back anything. The phrase is
// each class's default approval level; where the operator chose another
// level (elicit, grant) the plan says so and the program stops, because a
// phrase cannot approve such a step.
//
// Try it without Proxmox:
//
//	go run ./examples/clone-configure-start -demo -yes
//
// Against a real cluster it reads PVE_URL, PVE_API_TOKEN_ID,
// PVE_API_TOKEN_SECRET, PVE_TLS_FINGERPRINT or PVE_CA_FILE,
// PVE_ALLOWED_NODES and PROXMOX_SAFE_AUDIT_LOG (required), and needs
// -node and -template.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/examples/internal/exampleconfig"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clone-configure-start:", err)
		os.Exit(1)
	}
}

// options are the program's flags.
type options struct {
	node     string
	template int
	name     string
	cores    int
	memory   int
	disk     string
	grow     string
	linked   bool
	yes      bool
	demo     bool
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("clone-configure-start", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.node, "node", "", "node of the template (demo: pve2)")
	fs.IntVar(&o.template, "template", 0, "VMID of the QEMU template to clone (demo: 105, debian-13)")
	fs.StringVar(&o.name, "name", "app-01", "name of the new VM")
	fs.IntVar(&o.cores, "cores", 4, "CPU cores of the new VM")
	fs.IntVar(&o.memory, "memory", 4096, "memory of the new VM in MiB")
	fs.StringVar(&o.disk, "disk", "scsi0", "disk to grow")
	fs.StringVar(&o.grow, "grow", "+8G", "how much to grow the disk (+N[KMGT], or a larger absolute size)")
	fs.BoolVar(&o.linked, "linked", false, "linked clone (shares the template's base disks) instead of a full copy")
	fs.BoolVar(&o.yes, "yes", false, "approve every step without asking (the plans are still printed)")
	fs.BoolVar(&o.demo, "demo", false, "run against an in-process simulated cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.demo {
		o.node, o.template = or(o.node, "pve2"), orInt(o.template, 105)
	}
	if o.node == "" || o.template == 0 {
		return errors.New("-node and -template are required (or use -demo)")
	}

	cfg, cleanup, err := exampleconfig.Load(o.demo, "clone-configure-start")
	if err != nil {
		return err
	}
	defer cleanup()
	// The program prints every outcome itself; the library logs errors only.
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	cfg.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassProvision, proxmoxsafe.ClassConfig, proxmoxsafe.ClassPower}
	client, err := proxmoxsafe.New(cfg)
	if err != nil {
		return err
	}
	a := &approver{in: bufio.NewReader(stdin), out: stdout, yes: o.yes}
	wait := &proxmoxsafe.WaitOptions{Interval: 100 * time.Millisecond, Timeout: 2 * time.Minute}

	// 1. Clone. NewID 0 lets the plan pick the next free VMID; the
	// approving call names it, so the approval covers exactly that VMID.
	clone := proxmoxsafe.CloneGuestInput{
		GuestRef:    proxmoxsafe.GuestRef{Node: o.node, Type: proxmoxsafe.TypeQEMU, VMID: o.template},
		Linked:      o.linked,
		Name:        o.name,
		Description: "made by examples/clone-configure-start",
	}
	var newID int
	_, err = a.step(ctx, "clone", func(plan bool, approval string) (*proxmoxsafe.Receipt, error) {
		in := clone
		in.Plan, in.Approval, in.NewID = plan, approval, newID
		if !plan {
			in.Wait = wait
		}
		r, err := client.CloneGuest(ctx, in)
		if plan && err == nil && r.Plan != nil {
			newID, err = strconv.Atoi(r.Plan.Params["newid"])
		}
		return r, err
	})
	if err != nil {
		return err
	}
	vm := proxmoxsafe.Target{Node: o.node, Type: proxmoxsafe.TypeQEMU, VMID: newID}
	fmt.Fprintf(stdout, "new VM: %s (%s)\n", vm, o.name)

	// 2. Cores and memory (the config class shows current → new).
	if _, err := a.step(ctx, "configure", func(plan bool, approval string) (*proxmoxsafe.Receipt, error) {
		in := proxmoxsafe.SetGuestConfigInput{
			GuestRef: proxmoxsafe.GuestRef{Node: vm.Node, Type: vm.Type, VMID: vm.VMID},
			Controls: proxmoxsafe.Controls{Plan: plan, Approval: approval},
			Set:      map[string]string{"cores": strconv.Itoa(o.cores), "memory": strconv.Itoa(o.memory)},
		}
		if !plan {
			in.Wait = wait
		}
		return client.SetGuestConfig(ctx, in)
	}); err != nil {
		return err
	}

	// 3. Grow the disk (never shrinks: a smaller size is refused).
	if _, err := a.step(ctx, "resize", func(plan bool, approval string) (*proxmoxsafe.Receipt, error) {
		in := proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: vm.Node, Type: vm.Type, VMID: vm.VMID}, Disk: o.disk, Size: o.grow, Controls: proxmoxsafe.Controls{Plan: plan, Approval: approval}}
		if !plan {
			in.Wait = wait
		}
		return client.ResizeDisk(ctx, in)
	}); err != nil {
		return err
	}

	// 4. Start it.
	if _, err := a.step(ctx, "start", func(plan bool, approval string) (*proxmoxsafe.Receipt, error) {
		in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: vm.Node, Type: vm.Type, VMID: vm.VMID}, Action: proxmoxsafe.ActionStart, Controls: proxmoxsafe.Controls{Plan: plan, Approval: approval}}
		if !plan {
			in.Wait = wait
		}
		return client.GuestPower(ctx, in)
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "done: %s (%s) runs with %d cores, %d MiB, %s grown by %s\n", vm, o.name, o.cores, o.memory, o.disk, o.grow)
	return nil
}

// approver asks the person running the program to approve each plan.
type approver struct {
	in  *bufio.Reader
	out io.Writer
	yes bool
}

// step plans, asks, then runs call with the plan's approval phrase and
// reports the verified outcome. call(true, "") plans; call(false, phrase)
// does it.
func (a *approver) step(ctx context.Context, name string, call func(plan bool, approval string) (*proxmoxsafe.Receipt, error)) (*proxmoxsafe.Receipt, error) {
	r, err := call(true, "")
	if err != nil {
		return nil, fmt.Errorf("%s: refused before anything was sent: %w", name, err)
	}
	p := r.Plan
	fmt.Fprintf(a.out, "\n== %s %s\n", name, r.Target)
	fmt.Fprintf(a.out, "plan:     %s %s %s\n", p.Method, p.Path, params(p.Params))
	fmt.Fprintf(a.out, "effect:   %s\n", p.Effect)
	fmt.Fprintf(a.out, "approval: %s (levels: %s)\n", p.Approval, levels(p.ApprovalLevels))
	if !slices.Contains(p.ApprovalLevels, proxmoxsafe.LevelPhrase) {
		return nil, fmt.Errorf("%s: the operator requires %s for the %s class: a person must approve it there (the MCP server's elicitation or proxmox-safe-mcp approve CODE); nothing was sent", name, levels(p.ApprovalLevels), p.Class)
	}
	if !a.yes {
		fmt.Fprint(a.out, "approve? type yes: ")
		line, _ := a.in.ReadString('\n')
		if strings.TrimSpace(line) != "yes" {
			return nil, fmt.Errorf("%s: not approved; nothing was sent", name)
		}
	} else {
		fmt.Fprintln(a.out, "approved: -yes")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err = call(false, p.Approval)
	if err != nil {
		if r != nil && r.Outcome != nil {
			return nil, fmt.Errorf("%s: %s", name, r.Outcome.Message)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	msg := "submitted, task " + r.UPID
	if r.Outcome != nil {
		msg = r.Outcome.Message
	}
	fmt.Fprintf(a.out, "ok:       %s\n", msg)
	return r, nil
}

func params(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + p[k])
	}
	return b.String()
}

func levels(ls []proxmoxsafe.ApprovalLevel) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, ",")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orInt(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}
