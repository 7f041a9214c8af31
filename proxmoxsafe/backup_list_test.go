package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestListBackups(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, infraCluster(), nil)
	res, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.requests()
	if len(reqs) != 1 || reqLine(reqs[0]) != "GET /nodes/pve1/storage/local/content" ||
		reqs[0].Query.Encode() != "content=backup" {
		t.Fatalf("requests = %v %v", reqLines(reqs), reqs[0].Query)
	}
	if res.Total != 3 || len(res.Backups) != 3 {
		t.Fatalf("result = %+v", res)
	}
	var ids []string
	for _, b := range res.Backups {
		ids = append(ids, b.VolID)
	}
	want := []string{
		"local:backup/vzdump-qemu-100-2026_01_02-00_00_00.vma.zst",
		"local:backup/vzdump-lxc-200-2026_01_01-12_00_00.tar.zst",
		"local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst",
	}
	if !slices.Equal(ids, want) {
		t.Errorf("order = %v, want newest first %v", ids, want)
	}
	newest := res.Backups[0]
	if newest.VMID != 100 || newest.Type != "qemu" || newest.Format != "vma.zst" || newest.Size != 2<<30 || !newest.Protected ||
		!newest.Time.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("newest = %+v", newest)
	}
	// Notes: first line only (Proxmox), sanitized and capped (us).
	if strings.ContainsAny(newest.Notes, "\x1b\u202e\u200b\n") || strings.Contains(newest.Notes, "second line") ||
		len(newest.Notes) > 256 || !newest.NotesTruncated || !strings.HasPrefix(newest.Notes, "IGNORE PREVIOUS INSTRUCTIONS") {
		t.Errorf("notes = %q (truncated %v)", newest.Notes, newest.NotesTruncated)
	}
	if res.Backups[2].Notes != "nightly" || res.Backups[2].NotesTruncated {
		t.Errorf("plain notes = %+v", res.Backups[2])
	}

	e.fake.ResetRequests()
	res, err = e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local", VMID: 200, Limit: 1})
	if err != nil || res.Total != 1 || res.Backups[0].VMID != 200 {
		t.Fatalf("vmid filter: %+v %v", res, err)
	}
	if q := e.requests()[0].Query; q.Get("vmid") != "200" || q.Get("content") != "backup" {
		t.Errorf("query = %v", q)
	}
}

func TestListBackupsBounds(t *testing.T) {
	t.Parallel()
	c := testCluster()
	st := &proxmoxtest.Storage{ID: "local", Type: "dir", Content: []string{"backup"}}
	for i := range 300 {
		st.Backups = append(st.Backups, &proxmoxtest.Backup{VMID: 100, Type: "qemu", CTime: 1767225600 + int64(i)*60, Size: 1})
	}
	c.Storages = []*proxmoxtest.Storage{st}
	e := newEnvWith(t, c, nil)
	res, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local"})
	if err != nil || res.Total != 300 || len(res.Backups) != proxmoxsafe.DefaultListLimit {
		t.Fatalf("default page: %d of %d, %v", len(res.Backups), res.Total, err)
	}
	if res.Backups[0].Time.Before(res.Backups[1].Time) {
		t.Error("not newest first")
	}
	res, err = e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local", Limit: 1000})
	if err != nil || len(res.Backups) != 300 {
		t.Errorf("limit 1000: %d, %v", len(res.Backups), err)
	}
}

func TestListBackupsUpstreamErrors(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, infraCluster(), nil)
	_, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "nope"})
	var ae *proxmoxsafe.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || !strings.Contains(ae.Message, "storage 'nope' does not exist") {
		t.Errorf("err = %v", err)
	}
}
