package proxmoxtest

import "time"

// The demo's backups (DemoCluster): what backup_list, backup_coverage,
// backup_jobs and the restore show without a real cluster. Besides the
// old backup of every guest on "local" (DefaultStorages), a Proxmox
// Backup Server storage "pbs" holds last night's backups of the
// scheduled job (one of them failed verification, one protected) and a
// shared NFS storage "nas" a weekly backup of the databases pool; the
// daily job covers web-01, web-02, dns-01, proxy and mail, the weekly
// one the databases pool, and build-runner, kiosk, monitoring,
// staging-app and backup-agent no enabled job (a disabled one names
// staging-app, which has a recent backup made by hand). The jobs' recent runs are tasks of the demo server
// ([Server.AddDemoBackupRuns]).

// Demo backup job ids.
const (
	DemoDailyJob  = "backup-daily"
	DemoWeeklyJob = "backup-weekly"
)

// demoBackups adds the demo's backup storages, backups and jobs to c;
// times are relative to now, so ages read as in a live cluster.
func demoBackups(c *Cluster) {
	now := time.Now().UTC()
	night := time.Date(now.Year(), now.Month(), now.Day(), 2, 0, 0, 0, time.UTC)
	if night.After(now) {
		night = night.AddDate(0, 0, -1)
	}
	sunday := night.AddDate(0, 0, -int(night.Weekday()))
	pbs := &Storage{ID: "pbs", Type: "pbs", Shared: true, Content: []string{"backup"}, Total: 4 << 40, Used: 1 << 40,
		Config: map[string]string{"server": "pbs.demo.invalid", "datastore": "store1", "username": "pve@pbs"}}
	for i, vmid := range []int{100, 101, 200, 201, 204} {
		g := c.guest(vmid)
		b := &Backup{VMID: vmid, Type: g.Type, CTime: night.Unix() + int64(60*i), Size: max(g.MaxDisk/6, 1<<30),
			Notes: g.Name, Verification: "ok"}
		if vmid == 101 {
			b.Verification = "failed"
		}
		if vmid == 204 {
			b.CTime -= 86400 // last night's run failed for mail (AddDemoBackupRuns)
		}
		if vmid == 200 {
			b.Protected, b.Notes = true, g.Name+" before the resolver upgrade"
		}
		pbs.Backups = append(pbs.Backups, b)
	}
	// A backup someone made by hand two hours ago, before staging-app's
	// upgrade: the one guest a destroy passes the recent-backup guard for.
	staging := c.guest(107)
	pbs.Backups = append(pbs.Backups, &Backup{VMID: 107, Type: "qemu", CTime: now.Add(-2 * time.Hour).Unix(),
		Size: max(staging.MaxDisk/6, 1<<30), Notes: "before the upgrade", Verification: "ok"})
	nas := &Storage{ID: "nas", Type: "nfs", Shared: true, Content: []string{"backup", "iso"}, Total: 8 << 40, Used: 3 << 40,
		Config: map[string]string{"server": "10.0.0.50", "export": "/srv/pve-backup"}}
	for i, vmid := range []int{102, 102} {
		g := c.guest(vmid)
		nas.Backups = append(nas.Backups, &Backup{VMID: vmid, Type: g.Type, CTime: sunday.Unix() - int64(i)*7*86400 + 3600,
			Size: max(g.MaxDisk/4, 1<<30), Format: "vma.zst", Notes: g.Name})
	}
	c.Storages = append(c.Storages, pbs, nas)
	c.BackupJobs = append(c.BackupJobs,
		&BackupJob{ID: DemoDailyJob, Schedule: "02:00", Storage: "pbs", Mode: "snapshot", VMIDs: "100,101,200,201,204",
			NextRun: night.AddDate(0, 0, 1).Unix()},
		&BackupJob{ID: DemoWeeklyJob, Schedule: "sun 03:00", Storage: "nas", Mode: "snapshot", Pool: "databases",
			NextRun: sunday.AddDate(0, 0, 7).Add(time.Hour).Unix()},
		&BackupJob{ID: "backup-staging", Disabled: true, Schedule: "sat 04:00", Storage: "local", Mode: "stop", VMIDs: "107"},
	)
}

// AddDemoBackupRuns records the demo jobs' last runs as the scheduler
// would have left them: vzdump tasks of root@pam whose first log line
// is the job's command line (with --quiet 1). The daily job ran fine on
// pve1 and failed on pve2 (mail's backup); the weekly one ran on pve1.
func (s *Server) AddDemoBackupRuns() {
	now := time.Now().UTC()
	night := time.Date(now.Year(), now.Month(), now.Day(), 2, 0, 0, 0, time.UTC)
	if night.After(now) {
		night = night.AddDate(0, 0, -1)
	}
	sunday := night.AddDate(0, 0, -int(night.Weekday())).Add(time.Hour)
	daily := "INFO: starting new backup job: vzdump 100 101 200 201 204 --mode snapshot --quiet 1 --storage pbs"
	s.AddTask(Task{Node: "pve1", Type: "vzdump", StartTime: night.Unix(), EndTime: night.Unix() + 540, ExitStatus: "OK", Log: []string{
		daily, "INFO: skip external VMs: 201, 204",
		"INFO: Starting Backup of VM 100 (qemu)", "INFO: Finished Backup of VM 100 (00:03:02)",
		"INFO: Starting Backup of VM 101 (qemu)", "INFO: Finished Backup of VM 101 (00:02:41)",
		"INFO: Starting Backup of VM 200 (lxc)", "INFO: Finished Backup of VM 200 (00:00:37)",
		"INFO: Backup job finished successfully"}})
	s.AddTask(Task{Node: "pve2", Type: "vzdump", StartTime: night.Unix(), EndTime: night.Unix() + 300, ExitStatus: "job errors", Log: []string{
		daily, "INFO: skip external VMs: 100, 101, 200",
		"INFO: Starting Backup of VM 201 (lxc)", "INFO: Finished Backup of VM 201 (00:00:52)",
		"INFO: Starting Backup of VM 204 (lxc)",
		"ERROR: Backup of VM 204 failed - command 'lxc-freeze -n 204' failed: exit code 1",
		"INFO: Failed at " + time.Unix(night.Unix()+300, 0).UTC().Format("2006-01-02 15:04:05"),
		"INFO: Backup job finished with errors"}})
	s.AddTask(Task{Node: "pve1", Type: "vzdump", StartTime: sunday.Unix(), EndTime: sunday.Unix() + 900, ExitStatus: "OK", Log: []string{
		"INFO: starting new backup job: vzdump --mode snapshot --pool databases --quiet 1 --storage nas",
		"INFO: Starting Backup of VM 102 (qemu)", "INFO: Finished Backup of VM 102 (00:14:55)",
		"INFO: Backup job finished successfully"}})
}
