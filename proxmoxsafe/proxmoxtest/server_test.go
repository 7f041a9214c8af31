package proxmoxtest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(GenerateCluster(3, 30, 7))
	s.TaskPolls = 2
	s.StartTLS()
	defer s.Close()
	ctx := t.Context()
	// Goroutines must not call t.Fatal: they report what they saw, and
	// the test goroutine judges it.
	errs := make(chan error, 8*10*4)
	var stops atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 10 {
				switch (i + j) % 4 {
				case 0:
					a, err := tryCall(ctx, s, http.MethodGet, "/cluster/resources", nil, "")
					if err == nil && (a.code != 200 || len(a.body["data"].([]any)) == 0) {
						err = fmt.Errorf("GET /cluster/resources: %s %s", a.status, a.raw)
					}
					errs <- err
				case 1:
					a, err := tryCall(ctx, s, http.MethodGet, "/nodes/pve1/qemu", nil, "")
					if err == nil && a.code != 200 {
						err = fmt.Errorf("GET /nodes/pve1/qemu: %s %s", a.status, a.raw)
					}
					errs <- err
				case 2:
					a, err := tryCall(ctx, s, http.MethodPost, "/nodes/pve1/qemu/100/status/stop", url.Values{}, "")
					if err != nil {
						errs <- err
						continue
					}
					up, ok := a.body["data"].(string)
					if a.code != 200 || !ok {
						errs <- fmt.Errorf("POST stop: %s %s", a.status, a.raw)
						continue
					}
					stops.Add(1)
					errs <- waitStopped(ctx, s, "pve1", up)
				case 3:
					s.Update(func(c *Cluster) { c.Nodes[1].CPU += 0.01 })
					_, _ = s.Guest(101)
					_ = s.Tasks()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// Every stop was logged and became a task that ended, and the guest's
	// state agrees with the tasks: stopped exactly when a stop succeeded.
	if n := len(s.MutatingRequests()); n != int(stops.Load()) || n == 0 {
		t.Errorf("%d mutating requests logged, %d stops answered", n, stops.Load())
	}
	stopTasks, succeeded := 0, 0
	for _, task := range s.Tasks() {
		if task.Status != "stopped" {
			t.Errorf("task %s still %s", task.UPID, task.Status)
		}
		if task.Type == "qmstop" && task.ID == "100" {
			stopTasks++
			if task.ExitStatus == "OK" {
				succeeded++
			}
		}
	}
	if stopTasks != int(stops.Load()) {
		t.Errorf("%d stop tasks for %d stops answered", stopTasks, stops.Load())
	}
	g, _ := s.Guest(100)
	if (g.Status == "stopped") != (succeeded > 0) {
		t.Errorf("guest 100 is %q after %d successful stops of %d", g.Status, succeeded, stopTasks)
	}
}

// waitStopped polls a task until it stops; it returns an error instead of
// failing the test, for use on other goroutines.
func waitStopped(ctx context.Context, s *Server, node, upid string) error {
	for range 100 {
		a, err := tryCall(ctx, s, http.MethodGet, "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status", nil, "")
		if err != nil {
			return err
		}
		st, _ := a.body["data"].(map[string]any)
		if a.code != 200 || st == nil {
			return fmt.Errorf("task status %s: %s %s", upid, a.status, a.raw)
		}
		if st["status"] == "stopped" {
			return nil
		}
	}
	return fmt.Errorf("task %s never stopped", upid)
}

func TestPlainHTTP(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(nil)
	s.Start()
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://") {
		t.Fatalf("URL = %q", s.URL)
	}
	if a := get(t, s, "/nodes/pve1/lxc/100/status/current"); a.status != "500 Configuration file 'nodes/pve1/lxc/100.conf' does not exist" {
		t.Fatalf("status = %q", a.status)
	}
}
