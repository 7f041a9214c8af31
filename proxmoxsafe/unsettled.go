package proxmoxsafe

import (
	"errors"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// unsettledAdvice ends the error of a mutating request whose effect is
// unknown: it went out, and no usable answer came back.
const unsettledAdvice = "the request may have reached Proxmox and been carried out: check the guest's tasks and state before trying again"

// mayHaveRun adds unsettledAdvice to the error of a mutating request that
// failed after it was sent: no answer (a timeout, a cut connection), an
// answer Proxmox's success status came with but whose body was unusable,
// or a status by which a proxy or pveproxy says the request may have been
// forwarded before things went wrong (502, 504, 597-599). A plain error
// answer from Proxmox (4xx, 500, 501, 595, 596) or a failure before the
// request was written (refused connection, TLS) is returned as is. The
// result still matches what err matched.
func mayHaveRun(err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.StatusCode {
		case 502, 504, 597, 598, 599:
		default:
			return err
		}
	} else if !pve.Unsettled(err) {
		return err
	}
	return fmt.Errorf("%w; %s", err, unsettledAdvice)
}

// acceptedWithoutReceipt is the error of a mutating POST that Proxmox
// answered with success but without a usable task id: the action was
// most likely started, and nothing can be polled.
func acceptedWithoutReceipt(path string, err error) error {
	return fmt.Errorf("POST %s: %w; %s", path, err, unsettledAdvice)
}
