package proxmoxsafe

import (
	"context"
	"net/url"
	"strconv"
	"sync"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// Two guards against racing mutations of one guest. The precondition read
// and the POST are separate requests, so two callers could both see
// "running" and both send "stop"; and Proxmox runs power actions as tasks,
// so a second action can pass the state check while the first one's task
// is still running.

// inflight records the guests (by VMID, unique in a cluster) that a
// mutation through this Client is working on, from the policy check until
// the request was sent (or, with a wait, until the wait ended).
type inflight struct {
	mu     sync.Mutex
	guests map[int]string // vmid → action
}

// claim reserves m's guest or refuses when another mutation through this
// Client holds it, and then — with Config.LockDir — when another process
// on this host holds the guest's lock file (hostlock.go). The claim is
// released by run, or by waitIfAsked after the wait when one was asked for.
func (c *Client) claim(m *mutation) error {
	c.busy.mu.Lock()
	defer c.busy.mu.Unlock()
	if c.busy.guests == nil {
		c.busy.guests = map[int]string{}
	}
	if other, held := c.busy.guests[m.target.VMID]; held {
		return refuse(ErrPrecondition, "guest %d is already being changed through this client (%s in progress); wait for it to finish", m.target.VMID, other)
	}
	// Taken under busy.mu, after the in-process check: a second claim in
	// this process is refused above and never touches the lock file.
	unlockHost, err := c.lockGuest(m.target.VMID)
	if err != nil {
		return err
	}
	c.busy.guests[m.target.VMID] = m.action
	m.state.release = sync.OnceFunc(func() {
		unlockHost()
		c.busy.mu.Lock()
		defer c.busy.mu.Unlock()
		delete(c.busy.guests, m.target.VMID)
	})
	return nil
}

// maxActiveTasks bounds the active-task query; one running task suffices.
const maxActiveTasks = 10

type rawActiveTask struct {
	UPID   pve.String `json:"upid"`
	Type   pve.String `json:"type"`
	ID     pve.String `json:"id"`
	Status pve.String `json:"status"`
}

// checkNoActiveTask refuses a mutation while Proxmox runs a task for the
// guest, whoever started it (this server, the web UI, a backup job). It
// asks the guest's node for its active tasks; without Sys.Audit on the
// node Proxmox lists only the token's own tasks, which still covers races
// between callers of this server.
func (c *Client) checkNoActiveTask(ctx context.Context, t Target, s GuestState) error {
	return noActiveTask(t, s, func() ([]rawActiveTask, error) { return c.activeTasks(ctx, t) })
}

// activeTasks reads the guest's node's running tasks for the guest.
func (c *Client) activeTasks(ctx context.Context, t Target) ([]rawActiveTask, error) {
	q := url.Values{
		"source": {"active"},
		"vmid":   {strconv.Itoa(t.VMID)},
		"limit":  {strconv.Itoa(maxActiveTasks)},
	}
	var tasks []rawActiveTask
	if err := c.get(ctx, pve.Path("nodes", t.Node, "tasks"), q, &tasks); err != nil {
		return nil, err
	}
	return tasks, nil
}

// noActiveTask is checkNoActiveTask's verdict over the read tasks returns
// (already sent, in the pipeline).
func noActiveTask(t Target, s GuestState, tasks func() ([]rawActiveTask, error)) error {
	list, err := tasks()
	if err != nil {
		return &PreconditionReadError{Err: err}
	}
	for _, task := range list {
		if string(task.ID) != strconv.Itoa(t.VMID) {
			continue // defensive: the filter is Proxmox's
		}
		return refuse(ErrPrecondition, "%s has a task still running (%s, %s); wait for it to finish (task_status) before changing the guest again",
			describe(t, s), line(string(task.Type), 32), line(string(task.UPID), maxUPIDLen))
	}
	return nil
}
