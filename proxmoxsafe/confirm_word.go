package proxmoxsafe

import (
	"crypto/subtle"
	"strconv"
	"strings"
)

// ConfirmWord is what a person types to approve a request in a form (the
// elicitation form of mcpserver, the approval page of approvalweb), and
// what the form calls it. Typing it proves the person read the target:
//
//   - a request that names a guest (every dedicated tool, and a gateway
//     write whose path is under /nodes/NODE/TYPE/VMID): the guest's VMID,
//     e.g. "101", called "VMID";
//   - a request that names no guest (a gateway write to a node or the
//     cluster): the request line of its plan, method and full path, e.g.
//     "DELETE /cluster/ha/groups/web", called "request". The whole path,
//     because the last segment alone does not name the object ("web" is
//     also /pools/web) nor the node (/nodes/pve1/dns and /nodes/pve2/dns);
//     the method, because PUT and DELETE of one path are different
//     requests. A gateway path is plain ASCII of a restricted set with no
//     space, escape or percent sign (see [Client.APIRequest]), so the word
//     is typeable as shown.
//
// It returns "" for a request that names no guest and has no plan (no
// operation makes one): a form must then refuse to approve, since there
// is nothing to type that names the target.
func ConfirmWord(t Target, p *Plan) (word, what string) {
	switch {
	case t.VMID != 0:
		return strconv.Itoa(t.VMID), "VMID"
	case p != nil && p.Method != "" && p.Path != "":
		return p.Method + " " + p.Path, "request"
	}
	return "", ""
}

// ConfirmMatches reports whether typed is word ([ConfirmWord]): leading
// and trailing white space is ignored and a run of white space counts as
// one space (so "DELETE  /pools/web" typed with two spaces matches), and
// otherwise it must be the same bytes, case included (Proxmox paths are
// case-sensitive). An empty word matches nothing.
func ConfirmMatches(typed, word string) bool {
	if word == "" {
		return false
	}
	typed = strings.Join(strings.Fields(typed), " ")
	return subtle.ConstantTimeCompare([]byte(typed), []byte(word)) == 1
}
