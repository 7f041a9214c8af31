package pve

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Paged is an out value for the list endpoints that add a top-level
// "total" to the envelope (task log, task list): pass a *Paged to Get and
// read Total after it.
type Paged struct {
	// Data receives "data", like the out argument of Get.
	Data any
	// Total is the top-level "total"; -1 when the answer has none.
	Total int
}

func (p *Paged) decode(method, path string, body []byte) error {
	env := struct {
		Data  any  `json:"data"`
		Total *Int `json:"total"`
	}{Data: p.Data}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s %s: malformed response: %w", method, path, err)
	}
	if env.Data == nil || !bytes.Contains(body, []byte(`"data"`)) {
		return fmt.Errorf("%s %s: malformed response: no data", method, path)
	}
	p.Total = -1
	if env.Total != nil && *env.Total >= 0 {
		p.Total = int(*env.Total)
	}
	return nil
}
