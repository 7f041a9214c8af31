// Command list-and-snapshot snapshots every guest that carries a tag, using
// the proxmoxsafe library directly (no MCP).
//
// It lists the guests with the tag, then for each one builds the exact
// approval phrase with proxmoxsafe.ApprovalPhrase, submits the snapshot and
// waits for the Proxmox task with WaitTask. Guests the policy or the
// guest's state rule out (templates, locked guests, nodes not on the
// allowlist) are reported and skipped: the library refuses them before
// anything is sent.
//
// Running the program is the operator's approval: the phrase is built by
// the program because a human chose to run it for this tag. (For an AI
// agent the phrase is a floor, not proof of consent; see docs/SECURITY.md.)
//
// Try it without Proxmox:
//
//	go run ./examples/list-and-snapshot -demo -tag web
//
// Against a real cluster it reads PVE_URL, PVE_API_TOKEN_ID,
// PVE_API_TOKEN_SECRET, PVE_TLS_FINGERPRINT or PVE_CA_FILE,
// PVE_ALLOWED_NODES and PROXMOX_SAFE_AUDIT_LOG (required).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/examples/internal/exampleconfig"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "list-and-snapshot:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("list-and-snapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tag := fs.String("tag", "web", "snapshot the guests carrying this tag")
	snapname := fs.String("snapname", "auto-"+time.Now().UTC().Format("20060102-150405"), "snapshot name")
	demo := fs.Bool("demo", false, "run against an in-process simulated cluster")
	if err := fs.Parse(args); err != nil {
		return err
	}

	cfg, cleanup, err := exampleconfig.Load(*demo, "list-and-snapshot")
	if err != nil {
		return err
	}
	defer cleanup()
	// The library logs one line per operation (refusals at WARN); this program
	// prints every outcome itself, so show only errors.
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	// This program only snapshots: enable that class and nothing else, so
	// even a bug here could not power anything off.
	cfg.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassSnapshot}
	client, err := proxmoxsafe.New(cfg)
	if err != nil {
		return err
	}

	var guests []proxmoxsafe.Guest
	for cursor := ""; ; {
		page, err := client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Tag: *tag, Cursor: cursor})
		if err != nil {
			return fmt.Errorf("listing guests: %w", err)
		}
		guests = append(guests, page.Guests...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	fmt.Fprintf(stdout, "%d guest(s) tagged %q\n", len(guests), *tag)

	var failed int
	for _, g := range guests {
		in := proxmoxsafe.SnapshotGuestInput{
			GuestRef:    proxmoxsafe.GuestRef{Node: g.Node, Type: g.Type, VMID: g.VMID},
			Name:        *snapname,
			Description: "taken by examples/list-and-snapshot",
		}
		in.Approval = in.ApprovalPhrase()
		// Wait for the task and check that the snapshot is listed: a
		// receipt alone only proves submission.
		in.Wait = &proxmoxsafe.WaitOptions{Interval: 100 * time.Millisecond, Timeout: 2 * time.Minute}
		label := fmt.Sprintf("%s (%s)", in.Target(), g.Name)

		receipt, err := client.SnapshotGuest(ctx, in)
		switch {
		case errors.Is(err, proxmoxsafe.ErrNotAllowed), errors.Is(err, proxmoxsafe.ErrPrecondition):
			fmt.Fprintf(stdout, "skip %s: %v\n", label, err)
			continue
		case err != nil:
			failed++
			fmt.Fprintf(stdout, "FAIL %s: %v\n", label, err)
			continue
		}
		if o := receipt.Outcome; o.Status != proxmoxsafe.OutcomeCompleted && o.Status != proxmoxsafe.OutcomeCompletedWithWarnings {
			failed++
			fmt.Fprintf(stdout, "FAIL %s: %s\n", label, o.Message)
			continue
		}
		fmt.Fprintf(stdout, "ok   %s: snapshot %q, task %s\n", label, *snapname, receipt.Outcome.ExitStatus)
	}
	if failed > 0 {
		return fmt.Errorf("%d snapshot(s) failed", failed)
	}
	return nil
}
