package doctor

import (
	"os"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// checkSelection reports the tool selection, and what it hides of what
// the policy offers: a selection that hides everything useful would
// otherwise only show as a model that cannot do what was asked.
func checkSelection(r *report, cfg *settings.Config, client *proxmoxsafe.Client, opts *mcpserver.Options) {
	if cfg.Selection.IsZero() {
		return
	}
	all := mcpserver.Options{}
	if opts != nil {
		all = *opts
	}
	all.Selection = mcpserver.Selection{}
	var offered, hidden []string
	for _, t := range mcpserver.Tools(client, &all) {
		if cfg.Selection.Selects(t.Name) {
			offered = append(offered, t.Name)
		} else {
			hidden = append(hidden, t.Name)
		}
	}
	if len(offered) == 0 {
		r.warn("tool selection %s hides every tool the policy offers: the server lists none", cfg.Selection)
		return
	}
	r.info("tool selection %s: %d tools offered (%s), %d hidden", cfg.Selection, len(offered), strings.Join(offered, ", "), len(hidden))
}

// checkPolicy reports what the operator policy means in practice, before
// anything is sent: otherwise doctor could say "ok" and the next command
// fail, or a setup offer no mutation without saying why.
func checkPolicy(r *report, cfg *settings.Config, pol proxmoxsafe.Policy, grantDir string) {
	switch {
	case pol.ReadOnly:
		r.info("policy: read-only: no mutation tool is offered and only GET requests reach Proxmox")
	case len(pol.Classes) == 0:
		r.info("policy: profile %s enables no mutation class: only read tools are offered", cfg.Profile)
	case len(pol.AllowedNodes) == 0:
		r.warn("policy: profile %s enables mutation classes %s, but PVE_ALLOWED_NODES is empty: every mutation needs an allowed node, so no mutation tool is offered and node-targeted reads are refused",
			cfg.Profile, settings.ClassNames(pol.Classes))
		r.detail("set PVE_ALLOWED_NODES=pve1,pve2 (the nodes this server may act on), or PROXMOX_SAFE_PROFILE=%s to say that reads are all you want", proxmoxsafe.ProfileReadOnly)
	default:
		r.ok("policy: mutation classes %s on nodes %s, each action needing its approval", settings.ClassNames(pol.Classes), settings.DescribeNodes(pol.AllowedNodes))
	}
	if !pol.ReadOnly && len(pol.Classes) > 0 {
		checkApprovals(r, cfg, pol, grantDir)
		checkRecentBackup(r, pol)
	}
	// doctor needs no audit log, but serve does: say so here rather than
	// let the next command fail after "everything checked is fine". (The
	// demo's serve makes its own temporary audit log.)
	if cfg.Demo {
		return
	}
	serve := *cfg
	serve.Command = settings.CmdServe
	if err := settings.CheckRest(&serve); err != nil {
		r.fail("configuration: `serve` (and `call`) would refuse to start: %v", err)
	}
}

// checkApprovals reports the approval levels in force for each enabled
// class (the library's view: the setting, else the class's default) and
// what each level used needs on this host.
func checkApprovals(r *report, cfg *settings.Config, pol proxmoxsafe.Policy, grantDir string) {
	var parts []string
	used := map[proxmoxsafe.ApprovalLevel]bool{}
	for _, cl := range pol.Classes {
		levels := pol.ApprovalLevels(cl)
		if cl != proxmoxsafe.ClassGateway {
			for _, l := range levels {
				used[l] = true
			}
		}
		parts = append(parts, string(cl)+"="+settings.LevelsText(cl, levels, ","))
	}
	r.info("approvals: %s", strings.Join(parts, "; "))
	if used[proxmoxsafe.LevelPhrase] {
		r.detail("phrase: a floor, not proof that a person agreed (a model can type it); for classes that destroy, prefer elicit,grant (docs/SECURITY.md)")
	}
	if used[proxmoxsafe.LevelElicit] {
		switch path := cfg.ElicitKeyPath(true); {
		case path == "":
			r.detail("elicit: the key is made at every start: an elicitation pending across a restart is refused (set PROXMOX_SAFE_ELICIT_KEY_FILE to keep one)")
		case fileExists(path):
			r.detail("elicit: key file %s (checked at start), used nonces in the grant directory %s", path, grantDir)
		default:
			r.detail("elicit: key file %s does not exist yet; serve creates it (0600)", path)
		}
	}
	if used[proxmoxsafe.LevelGrant] {
		r.detail("grant: the operator runs proxmox-safe-mcp approve CODE on this host (grant directory %s)", grantDir)
	}
	if used[proxmoxsafe.LevelNone] {
		r.detail("none: no approval; only the class's guards and the audit log stand between a caller and the action")
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkRecentBackup reports the recent-backup guard: off, or which
// enabled classes it guards with what age, and a class it names that is
// not enabled (the setting then does nothing for it).
func checkRecentBackup(r *report, pol proxmoxsafe.Policy) {
	desc := settings.DescribeRecentBackup(pol)
	if desc == "off" {
		r.info("recent-backup guard: off: destroy, snapshot rollback and config changes do not require a backup (PROXMOX_SAFE_RECENT_BACKUP)")
		return
	}
	r.info("recent-backup guard: %s: refuses a guest's destroy, snapshot rollback or config change without a backup that new (its backups are read before each)", desc)
	for _, cl := range proxmoxsafe.RecentBackupClasses() {
		if _, on := pol.RecentBackupAge(cl); on && !slices.Contains(pol.Classes, cl) {
			r.detail("class %s is not enabled: the guard has nothing of it to check", cl)
		}
	}
}
