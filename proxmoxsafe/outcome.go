package proxmoxsafe

import (
	"time"
)

// Completion proof for mutations (docs/ARCHITECTURE.md, "Completion
// proof": a receipt proves submission, not completion).
//
// A [Receipt] says Proxmox accepted a request. [Client.Verify] turns it into
// an [Outcome]: it polls the task until it stops, then re-reads the guest
// (or its snapshot list) until the state the action promised is there. The
// wait is bounded by a timeout the caller picks and the operator caps.

// DefaultWaitTimeout bounds a wait when [WaitOptions.Timeout] is zero.
const DefaultWaitTimeout = 30 * time.Second

// DefaultMaxWait is the operator's cap on any wait when [Config.MaxWait] is
// zero. Two minutes covers a clean shutdown of most guests and the HA
// manager's usual delay, while keeping a tool call from holding a client
// (and a model's turn) for long.
const DefaultMaxWait = 120 * time.Second

// MaxMaxWait is the largest [Config.MaxWait] accepted. Waiting longer than
// an hour inside one call is almost certainly a unit mistake ("120m" for
// "120s"); poll the task later instead.
const MaxMaxWait = time.Hour

// DefaultLogTail is how many task log lines an [Outcome] keeps.
const DefaultLogTail = 10

// rebootClockSlack is how much younger than the task a rebooted guest's
// uptime may look and still count as "restarted after the request". It
// absorbs the 1-second resolution of both numbers and modest clock skew
// between this host (elapsed time) and the Proxmox node (the UPID's start
// time).
const rebootClockSlack = 15 * time.Second

// OutcomeStatus says, in one word, what became of a submitted mutation.
type OutcomeStatus string

// The outcomes [Client.Verify] reports.
const (
	// OutcomeSubmitted: only submission is known. A receipt without a wait
	// has no Outcome at all; an Outcome says "submitted" when the wait was
	// cut short by the caller's context or could not read Proxmox.
	OutcomeSubmitted OutcomeStatus = "submitted"
	// OutcomeCompleted: the task ended OK and fresh state shows the result.
	OutcomeCompleted OutcomeStatus = "completed"
	// OutcomeCompletedWithWarnings: the task ended "WARNINGS: n" and fresh
	// state shows the result.
	OutcomeCompletedWithWarnings OutcomeStatus = "completed_with_warnings"
	// OutcomeFailed: the task stopped with an error exit status.
	OutcomeFailed OutcomeStatus = "failed"
	// OutcomeTimeout: at the timeout the task was still running, or it had
	// ended but the guest had not reached the expected state yet. The
	// action may still complete; check the task (UPID) and the guest later.
	OutcomeTimeout OutcomeStatus = "timeout"
)

// Outcome is what a wait established about a submitted mutation. Text in it
// comes from Proxmox, sanitized and capped: data, not instructions.
type Outcome struct {
	// Status is the verdict; see the Outcome* constants.
	Status OutcomeStatus `json:"status"`
	// Message says the verdict in one plain sentence.
	Message string `json:"message"`
	// UPID is the task waited for, to check later after a timeout.
	UPID string `json:"upid"`
	// TaskStatus is the task's last known status: "running" or "stopped".
	TaskStatus string `json:"task_status,omitempty"`
	// ExitStatus is the task's exit status once stopped: "OK",
	// "WARNINGS: <n>" or Proxmox's error text.
	ExitStatus string `json:"exitstatus,omitempty"`
	// Warnings is n of "WARNINGS: <n>".
	Warnings int `json:"warnings,omitempty"`
	// LogTail holds the last lines of the task log for failed tasks and
	// tasks with warnings (at most [DefaultLogTail], each capped).
	LogTail []string `json:"log_tail,omitempty"`
	// Verified is true when fresh state showed what the action promised:
	// the power state for power actions, the snapshot for snapshots.
	Verified bool `json:"verified"`
	// Observed says what the last fresh read showed, e.g. "running",
	// "stopped", "snapshot before-upgrade present".
	Observed string `json:"observed,omitempty"`
	// Pending lists, for the config class, the keys whose change Proxmox
	// holds until the guest's next start (it could not apply them to the
	// running guest): set, but not applied yet.
	Pending []string `json:"pending,omitempty"`
	// After is the guest state read last, for power actions.
	After *GuestState `json:"after,omitempty"`
	// Uptime is the guest's uptime in seconds at the last read, for power
	// actions; after a reboot it shows whether the guest restarted.
	Uptime int64 `json:"uptime,omitempty"`
	// TaskPolls and StatePolls count the task status and guest state reads.
	TaskPolls  int `json:"task_polls"`
	StatePolls int `json:"state_polls"`
	// Waited is how long the wait took. Adapters choose its wire unit
	// (the MCP tools send waited_ms).
	Waited time.Duration `json:"-"`
	// Timeout is the timeout that applied, after the operator's cap
	// (the MCP tools send timeout_seconds).
	Timeout time.Duration `json:"-"`
	// TimeoutClamped is true when the requested timeout exceeded the
	// operator's cap ([Config.MaxWait]) and the cap applied instead.
	TimeoutClamped bool `json:"timeout_clamped,omitempty"`
}

// Err returns a *[TaskError] (matching [ErrTaskFailed]) when the task
// failed, and nil for every other outcome: a timeout is not a failure, the
// action may still complete.
func (o *Outcome) Err() error {
	if o == nil || o.Status != OutcomeFailed {
		return nil
	}
	return &TaskError{UPID: o.UPID, ExitStatus: o.ExitStatus}
}

// ProgressPhase names what a wait is doing when it reports [Progress].
type ProgressPhase string

// Progress phases, in the order a wait goes through them.
const (
	// ProgressTaskRunning: the task status was read and it is still running.
	ProgressTaskRunning ProgressPhase = "task_running"
	// ProgressWaitingForState: the task ended but the guest does not show
	// the result yet.
	ProgressWaitingForState ProgressPhase = "waiting_for_state"
	// ProgressWaitingForHA: as ProgressWaitingForState, for an HA-managed
	// guest whose ha* task only asked the HA manager.
	ProgressWaitingForHA ProgressPhase = "waiting_for_ha"
	// ProgressDone: the wait has its outcome (reported once, last).
	ProgressDone ProgressPhase = "done"
)

// Progress is reported to [WaitOptions.OnProgress] after every read.
type Progress struct {
	Phase ProgressPhase
	// Message is one short sentence for humans, e.g. "task running (poll 3)".
	Message string
	// Poll counts the reads so far (task and state), from 1; it only grows,
	// so adapters can use it as a progress counter.
	Poll int
	// Elapsed is the time since the wait began; Timeout is its bound.
	Elapsed time.Duration
	Timeout time.Duration
}
