package proxmoxsafe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// argsDigestDomain separates this digest from any other SHA-256 the
// module computes, and versions its encoding.
const argsDigestDomain = "proxmox-safe-mcp/arguments/v1"

// digestSkipped are the JSON fields of a mutation input that are not part
// of its arguments digest: they say how the call is approved ("approval")
// or whether it runs at all ("plan"), not what it does. Fields that are not
// serialized (json:"-", such as Wait) are left out as well.
var digestSkipped = []string{"approval", "plan"}

// ArgumentsDigest returns the digest that binds an approval to the exact
// arguments of a mutation: the lowercase hex SHA-256 of
//
//	"proxmox-safe-mcp/arguments/v1" LF op LF canonical-JSON
//
// where canonical-JSON is the validated input struct encoded with
// encoding/json (its json tags, so omitempty fields at their zero value
// are absent, exactly as when the caller leaves them out), without the
// "approval" and "plan" fields, re-encoded with object keys sorted and no
// insignificant space. Two calls have the same digest exactly when they
// ask the same operation with the same arguments, whatever approval text
// they carry, whether they only plan, and whether or how long they wait.
//
// The pipeline puts it in [ApprovalRequest.Arguments]; the grant store and
// the MCP elicitation bind their approvals to it. It is an unkeyed hash,
// on purpose: a guessable value in the input could be confirmed against
// it by whoever reads a grant file, so no input it covers may hold a
// secret. The typed inputs have no secret field, and a gateway write
// ([APIRequestInput.Params]) with a parameter the gateway would redact is
// refused before approval (docs/SECURITY.md, "Digests"): every value it
// covers is one the plan shows in full.
func ArgumentsDigest(op Operation, input any) (string, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return "", fmt.Errorf("arguments digest: %w", err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as encoded
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("arguments digest: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range digestSkipped {
			delete(m, k)
		}
	}
	canon, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return "", fmt.Errorf("arguments digest: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(argsDigestDomain + "\n" + string(op) + "\n"))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}
