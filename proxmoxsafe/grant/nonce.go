package grant

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// nonceFile is the file in a grant directory that keeps other approvers'
// used nonces (the MCP elicitation's).
const nonceFile = "used-nonces.json"

// maxNonces bounds the file: an approver that needs more unexpired nonces
// than this at once is refused rather than letting the file grow.
const maxNonces = 100000

// UseNonce records nonce as used until expires and reports whether it was
// unused: false means it was used before (a replay). It serves approvers
// whose single-use tokens must stay used across a restart, such as the MCP
// elicitation with a persistent key (mcpserver.ElicitOptions.Used): the
// nonces live in the grant directory (file used-nonces.json, 0600) under
// the same lock as the grants, so several processes sharing the directory
// share them too. Entries are forgotten a minute after they expire, when
// the token they guard can no longer be accepted anyway.
func (s *Store) UseNonce(nonce string, expires time.Time) (bool, error) {
	if nonce == "" {
		return false, errors.New("empty nonce")
	}
	fresh := false
	err := s.locked(func() error {
		path := filepath.Join(s.dir, nonceFile)
		used := map[string]int64{}
		raw, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(raw, &used); err != nil {
				return fmt.Errorf("%s is damaged; it holds only used nonces, so moving it aside re-opens answers not yet expired: check it first", path)
			}
		}
		now := s.now()
		for n, exp := range used {
			if now.After(time.Unix(exp, 0).Add(time.Minute)) {
				delete(used, n)
			}
		}
		if _, seen := used[nonce]; seen {
			return nil
		}
		if len(used) >= maxNonces {
			return fmt.Errorf("%s holds %d unexpired nonces; refusing more", path, len(used))
		}
		used[nonce] = expires.Unix()
		out, err := json.Marshal(used)
		if err != nil {
			return err
		}
		if err := s.writeFile(nonceFile, out); err != nil {
			return err
		}
		fresh = true
		return nil
	})
	return fresh, err
}
