package main

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
)

// TestConfigurationReferenceCoversSettings: every variable and flag of the
// settings table is in the generated reference, each in its own table, and
// the prose outside the markers is kept.
func TestConfigurationReferenceCoversSettings(t *testing.T) {
	t.Parallel()
	doc := "# c\n\nprose before\n\n" + settingsStart + "\nOLD-BLOCK\n" + settingsEnd + "\n\nmiddle\n\n" + httpSettingsStart + "\n" + httpSettingsEnd + "\n\nprose after\n"
	got, err := renderConfiguration(doc)
	if err != nil {
		t.Fatal(err)
	}
	general, _, _ := strings.Cut(got, settingsEnd)
	_, http, _ := strings.Cut(got, httpSettingsStart)
	for _, in := range settings.Reference() {
		part := general
		if in.HTTP {
			part = http
		}
		for _, name := range []string{in.Env, in.Flag} {
			if name == "" {
				continue
			}
			if in.Flag == name {
				name = "--" + name
			}
			if !strings.Contains(part, "`"+name+"`") {
				t.Errorf("%s is not in its reference table", name)
			}
		}
	}
	for _, kept := range []string{"prose before", "middle", "prose after"} {
		if !strings.Contains(got, kept) {
			t.Errorf("prose %q lost", kept)
		}
	}
	if strings.Contains(got, "OLD-BLOCK") {
		t.Error("the old block was kept")
	}
	if _, err := renderConfiguration("# no markers\n"); err == nil || !strings.Contains(err.Error(), settingsStart) {
		t.Errorf("without markers: err = %v", err)
	}
}
