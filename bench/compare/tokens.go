package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// The token side of the ratios: what every conversation pays for
// the tool definitions, and what one page of list_guests costs. Both are
// byte counts of what the binary serves over stdio, so they do not depend
// on the machine.

// sizeTargets are the definition targets (compact JSON of name,
// description and input schema, all tools of the profile), in bytes.
var sizeTargets = map[string]int{"safe": 8 << 10, "responder": 8704, "admin+gateway-write": 20 << 10}

// definitionSizes lists tools under each profile and prints, per profile,
// the model-facing definitions and the whole tools/list answer.
func definitionSizes(ours string, env func(*proxmoxtest.Server, string) []string, fake *proxmoxtest.Server) error {
	fmt.Printf("\n| tool definitions (compact JSON: name + description + input schema) | tools | bytes | per tool | target | tools/list on the wire |\n|---|---|---|---|---|---|\n")
	for _, p := range []struct{ name, profile string }{
		{"readonly", "readonly"}, {"safe", "safe"}, {"responder", "responder"}, {"admin", "admin"}, {"admin+gateway-write", "admin"},
	} {
		e := append(env(fake, "pve1,pve2,pve3"), "PROXMOX_SAFE_READ_ONLY=false", "PROXMOX_SAFE_PROFILE="+p.profile)
		if strings.Contains(p.name, "gateway-write") {
			e = append(e, "PROXMOX_SAFE_GATEWAY_WRITE=true")
		}
		sess, err := startSession(ours, e)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		res, err := sess.call("tools/list", map[string]any{})
		sess.close()
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		var list struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(res, &list); err != nil {
			return err
		}
		defs := 0
		for _, t := range list.Tools {
			b, _ := json.Marshal(t) // compact: the three fields alone
			defs += len(b)
		}
		target := "—"
		if n, ok := sizeTargets[p.name]; ok {
			target = fmt.Sprintf("≤ %.1f KB (%.2f×)", float64(n)/1024, float64(defs)/float64(n))
		}
		per := 0
		if len(list.Tools) > 0 {
			per = defs / len(list.Tools)
		}
		fmt.Printf("| %s | %d | %.1f KB | %d B | %s | %.1f KB |\n", p.name, len(list.Tools), float64(defs)/1024, per, target, float64(len(res))/1024)
	}
	return nil
}

// guestListSizes calls list_guests (one default page) on a cluster of
// more guests than a page holds and prints the text and structured bytes
// per listed guest.
func guestListSizes(ours string, env func(*proxmoxtest.Server, string) []string) error {
	fake := proxmoxtest.NewServer(proxmoxtest.GenerateCluster(3, 100, 7))
	defer fake.Close()
	sess, err := startSession(ours, env(fake, "pve1,pve2,pve3"))
	if err != nil {
		return err
	}
	defer sess.close()
	res, err := sess.call("tools/call", map[string]any{"name": "list_guests", "arguments": map[string]any{}})
	if err != nil {
		return err
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured struct {
			Guests []json.RawMessage `json:"guests"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	text := 0
	for _, c := range r.Content {
		text += len(c.Text)
	}
	n := len(r.Structured.Guests)
	if n == 0 {
		return fmt.Errorf("list_guests listed no guest")
	}
	structured, _ := json.Marshal(r.Structured)
	fmt.Printf("\n| list_guests, one default page (%d of 300 guests) | bytes | per guest | target |\n|---|---|---|---|\n", n)
	fmt.Printf("| text content | %.1f KB | %d B | ≤ 100 B |\n", float64(text)/1024, text/n)
	fmt.Printf("| structuredContent | %.1f KB | %d B | — |\n", float64(len(structured))/1024, len(structured)/n)
	return nil
}

// resultSizes prints what a few everyday answers cost: the text content
// (what a host that shows the model only the text hands it) and the
// structuredContent, for cluster_status, guest_status and a refusal
// (guest_power without its approval), on the default fake.
func resultSizes(ours string, env func(*proxmoxtest.Server, string) []string) error {
	fake := proxmoxtest.NewServer(nil)
	defer fake.Close()
	sess, err := startSession(ours, append(env(fake, "pve1,pve2,pve3"), "PROXMOX_SAFE_READ_ONLY=false", "PROXMOX_SAFE_PROFILE=safe"))
	if err != nil {
		return err
	}
	defer sess.close()
	guest := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}
	fmt.Printf("\n| answer | text content | structuredContent |\n|---|---|---|\n")
	for _, c := range []struct {
		label, tool string
		args        map[string]any
	}{
		{"cluster_status", "cluster_status", map[string]any{}},
		{"guest_status", "guest_status", guest},
		{"guest_power refused: no approval phrase (isError)", "guest_power", map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}},
	} {
		res, err := sess.call("tools/call", map[string]any{"name": c.tool, "arguments": c.args})
		if err != nil {
			return fmt.Errorf("%s: %w", c.label, err)
		}
		var r struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			return err
		}
		text := 0
		for _, c := range r.Content {
			text += len(c.Text)
		}
		structured := "—"
		if len(r.Structured) > 0 {
			structured = fmt.Sprintf("%d B", len(r.Structured))
		}
		fmt.Printf("| %s | %d B | %s |\n", c.label, text, structured)
	}
	return nil
}
