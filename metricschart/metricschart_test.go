package metricschart

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"html"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

var update = flag.Bool("update", false, "rewrite docs/metrics-chart.png (and the screenshot) from this run")

// history reads a metrics history from the demo cluster with a fixed clock
// (2026-03-02 13:37 UTC).
func history(t *testing.T, in proxmoxsafe.MetricsHistoryInput) *proxmoxsafe.MetricsHistoryResult {
	t.Helper()
	c := proxmoxtest.DemoCluster()
	c.RRD = &proxmoxtest.RRD{Now: func() time.Time { return time.Unix(1772458620, 0) }}
	fake := proxmoxtest.NewServer(c)
	t.Cleanup(fake.Close)
	client, err := proxmoxsafe.New(proxmoxsafe.Config{URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID,
		TokenSecret: proxmoxtest.DefaultTokenSecret, Fingerprint: fake.Fingerprint(),
		Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.MetricsHistory(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkPNG decodes a chart and checks its size and that it is a drawing,
// not a blank: many distinct colors, ink in most columns of the plot.
func checkPNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != Width || r.Dy() != Height {
		t.Fatalf("size %v, want %dx%d", r, Width, Height)
	}
	colors := map[[4]uint32]bool{}
	inked := 0
	for x := 0; x < Width; x += 4 {
		col := false
		for y := 0; y < Height; y += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			colors[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}] = true
			if r>>8 < 200 || g>>8 < 200 || bl>>8 < 200 {
				col = true
			}
		}
		if col {
			inked++
		}
	}
	if len(colors) < 20 || inked < Width/4*3/4 {
		t.Errorf("%d colors, %d of %d columns inked: looks blank", len(colors), inked, Width/4)
	}
	return img
}

func TestPNGGuest(t *testing.T) {
	t.Parallel()
	res := history(t, proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", VMID: 102, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}})
	b, err := PNG(res)
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, b)
	if *update {
		if err := os.WriteFile(filepath.Join("..", "docs", "metrics-chart.png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPNGNodeStorageYear(t *testing.T) {
	t.Parallel()
	for _, in := range []proxmoxsafe.MetricsHistoryInput{
		{Node: "pve1", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "year", CF: "MAX"}},
		{Node: "pve1", Storage: "local-lvm", MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "month"}},
		{Node: "pve2", Type: "lxc", VMID: 201, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}},
	} {
		b, err := PNG(history(t, in))
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		checkPNG(t, b)
	}
}

func TestPNGNoData(t *testing.T) {
	t.Parallel()
	res := history(t, proxmoxsafe.MetricsHistoryInput{Node: "pve2", Type: "qemu", VMID: 103, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "hour"}})
	if _, err := PNG(res); err != ErrNoData {
		t.Errorf("stopped guest: %v", err)
	}
	if _, err := PNG(nil); err != ErrNoData {
		t.Errorf("nil: %v", err)
	}
}

// TestChartInChromium shows the chart as a host shows an image content
// beside its text: a page with the PNG as a data: URL and the summary
// line. Headless Chromium loads it (the DOM it dumps holds the image's
// natural size, which a PNG it could not decode would not have) and
// takes the screenshot docs/metrics-chart-chromium.png. It is skipped
// where Chromium is not installed (Debian package "chromium").
func TestChartInChromium(t *testing.T) {
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		t.Skip("no chromium on PATH")
	}
	res := history(t, proxmoxsafe.MetricsHistoryInput{Node: "pve1", Type: "qemu", VMID: 102, MetricsWindow: proxmoxsafe.MetricsWindow{Timeframe: "day"}})
	b, err := PNG(res)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "chart.html")
	summary := fmt.Sprintf("VM %d on %s, last %s: %d points", res.VMID, res.Node, res.Timeframe, len(res.Points))
	doc := `<!doctype html><html><body style="margin:16px;font:14px sans-serif;background:#fff">` +
		`<p id="s">` + html.EscapeString(summary) + `</p>` +
		`<img id="c" alt="chart" src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(b) + `">` +
		`<script>const i=document.getElementById("c");const f=()=>document.body.dataset.size=i.naturalWidth+"x"+i.naturalHeight;` +
		`i.complete?f():i.onload=f;</script></body></html>`
	if err := os.WriteFile(page, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(dir, "profile")}
	out, err := exec.CommandContext(t.Context(), chromium, append(args, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if want := fmt.Sprintf(`data-size="%dx%d"`, Width, Height); !strings.Contains(string(out), want) {
		t.Fatalf("the page did not show the image (%s not in the DOM)", want)
	}
	shot := filepath.Join(dir, "shot.png")
	cmd := exec.CommandContext(t.Context(), chromium, append(args, "--hide-scrollbars", "--window-size=840,480", "--screenshot="+shot, "file://"+page)...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium --screenshot: %v", err)
	}
	sb, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(sb))
	if err != nil || img.Bounds().Dx() != 840 {
		t.Fatalf("screenshot: %v, %v", img.Bounds(), err)
	}
	if *update {
		if err := os.WriteFile(filepath.Join("..", "docs", "metrics-chart-chromium.png"), sb, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
